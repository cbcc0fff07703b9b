"""Letter folds: marks the recogniser does not read (ť, ț, ï) are compared without them on both sides, and ş ţ are
ș ț (cedilla and comma below one letter each). A correct render read as the bare letter, or with the other mark,
scores as exact, while every other accent and every letter still costs."""
from __future__ import annotations

from dataclasses import replace

import pytest

from vistar.api import OcrLine, OcrResult
from vistar.engine.params import metric_params
from vistar.metrics.text_similarity import normalize_text
from vistar.metrics.tr import METRIC, tr_score
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(None), "TR")
BOX = ((0.0, 0.0), (400.0, 0.0), (400.0, 40.0), (0.0, 40.0))


def run(read: str, expected: str, **params):
    ocr = OcrResult((OcrLine(read, 0.97, BOX),), 640, 640)
    return METRIC.fn({"ocr": ocr}, {"text": expected}, replace(PARAMS, **params), None)


def test_the_shipped_letters_are_the_ones_read_bare_in_most_correct_renders():
    assert set(PARAMS.unseen_marks) == {"ť", "ț", "ï"}


def test_a_bare_letter_read_for_an_unseen_mark_is_no_error_and_the_row_says_which():
    result = run("Tara Stastny Naive", "Țara Šťastný Naïve")
    # ț, ť, ï free; Š read S and ý read y are accents the recogniser does read: half a letter each, as before
    off = run("Tara Stastny Naive", "Țara Šťastný Naïve", unseen_marks=())
    expected_chars = 18
    assert result.score == pytest.approx(tr_score("Tara Stastny Naive", "Tara Šťastný Naive", 0.5,
                                                  unseen_marks="ť")["score"])
    assert 1 - result.details["char"] == pytest.approx(1.0 / expected_chars)          # two half letters
    assert 1 - off.details["char"] == pytest.approx(2.5 / expected_chars)             # and three more halves
    assert result.details["marks_not_scored"] == "ïťț"
    assert "marks_not_scored" not in run("Cafe", "Café").details


def test_the_mark_read_is_not_charged_either_and_other_letters_still_cost():
    assert run("Țară", "Țară").score == pytest.approx(1.0)
    assert run("Tară", "Țară").score == pytest.approx(1.0)
    assert run("Tara", "Țară").score < 1.0                       # ă is read: its loss still costs half a letter
    assert run("Kara", "Țara").score < run("Tara", "Țara").score  # a wrong letter is a typo, whatever its marks


def test_normalisation_folds_only_the_listed_letters_in_either_case():
    assert normalize_text("ȚARĂ Ştefan ÏŤ", unseen_marks="ťțï") == "tară ştefan it"
    assert normalize_text("ȚARĂ ÏŤ", unseen_marks="ťțï", case_sensitive=True) == "TARĂ IT"
    assert normalize_text("Țară", unseen_marks="") == "țară"
    assert normalize_text("Țară", unseen_marks="ťțï", fold_accents=True) == "tara"


def test_cedilla_and_comma_below_are_one_letter_and_a_wrong_letter_still_costs():
    assert PARAMS.cedilla_as_comma is True
    assert run("Şcoală", "Școală").score == pytest.approx(1.0)        # Romanian ș read with a cedilla
    assert run("çarșı", "çarşı").score == pytest.approx(1.0)          # Turkish ş read with a comma below
    assert run("Ţară", "Țară").score == pytest.approx(1.0)
    off = run("Şcoală", "Școală", cedilla_as_comma=False)
    assert 1 - off.details["char"] == pytest.approx(0.5 / 6)          # before: an accent, half a letter of six
    assert run("Scoală", "Școală").score == pytest.approx(off.score)   # a lost mark still costs half a letter
    assert normalize_text("ŞŢşţ", cedilla_as_comma=True) == "șțșț"
    assert normalize_text("ŞŢ", cedilla_as_comma=True, case_sensitive=True) == "ȘȚ"
    assert normalize_text("Ţară", cedilla_as_comma=True, unseen_marks="ț") == "tară"   # then the unseen mark
