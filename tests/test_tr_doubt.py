"""Recogniser doubt: the OCR decode keeps each character's close alternatives (on hand-made posteriors), and TR reads
the expected letter where it was among them (on hand-made OcrLines), while a typo read surely still costs."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from vistar.api import OcrLine, OcrResult
from vistar.engine.params import metric_params
from vistar.features.ocr import restore_spaces
from vistar.metrics.text_doubt import resolve
from vistar.metrics.tr import METRIC, tr_score
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(None), "TR")
BOX = ((0.0, 0.0), (300.0, 0.0), (300.0, 40.0), (0.0, 40.0))
CHARS = ["", "K", "1", "ı", " ", "a"]   # blank, letters, space at 4


def probs(*columns: dict[int, float]) -> np.ndarray:
    out = np.zeros((len(columns), len(CHARS)))
    for t, col in enumerate(columns):
        for c, p in col.items():
            out[t, c] = p
        out[t, 0] += 1.0 - out[t].sum()
    return out


def test_decode_keeps_a_close_alternative_at_its_share_of_the_read_class():
    # "1" read over two frames, ı at most 0.3 against 1's peak 0.6: share 0.5; "K" read surely, no rival
    p = probs({1: 0.95}, {2: 0.6, 3: 0.3}, {2: 0.5, 3: 0.2}, {4: 0.5}, {5: 0.9, 3: 0.01})
    reading = restore_spaces(p, "K1a", 4, 0.1, CHARS)
    assert reading == "K1 a"
    assert reading.alternatives == ((1, "ı", 0.5),)   # indexes the text after its restored space
    assert restore_spaces(p, "K1a", 4, 0.1, CHARS, alt_floor=0.6).alternatives == ()
    assert restore_spaces(p, "XY", 4, 0.1, CHARS) == "XY"   # not its decode: text untouched, no alternatives


def test_decode_never_offers_blank_or_space_as_an_alternative():
    p = probs({1: 0.5, 4: 0.4})   # the rest, 0.1, is blank
    assert restore_spaces(p, "K", 4, 0.1, CHARS).alternatives == ()


def line(text: str, *alternatives: tuple[int, str, float]) -> OcrLine:
    return OcrLine(text, 0.95, BOX, tuple(alternatives))


def score(lines: list[OcrLine], expected: str, **params) -> float:
    result = METRIC.fn({"ocr": OcrResult(tuple(lines), 640, 640)}, {"text": expected}, replace(PARAMS, **params), None)
    return result.score


def test_a_letter_the_recogniser_was_torn_about_scores_as_the_exact_word():
    torn = line("Kahvalt1 Sofrası", (7, "ı", 0.4))
    assert score([torn], "Kahvaltı Sofrası", alt_prob=0.3) == 1.0
    plain = tr_score("Kahvalt1 Sofrası", "Kahvaltı Sofrası", PARAMS.w_char)["score"]
    assert plain < 1.0
    assert score([torn], "Kahvaltı Sofrası", alt_prob=0.5) == pytest.approx(plain)   # below the share: as read
    assert score([torn], "Kahvaltı Sofrası", alt_prob=math.inf) == pytest.approx(plain)


def test_a_typo_read_surely_still_costs():
    # the render drew "Kahvalta": read surely as drawn, no alternative, scored as the typo it is
    typo = tr_score("Kahvalta Sofrası", "Kahvaltı Sofrası", PARAMS.w_char)["score"]
    assert typo < 1.0
    assert score([line("Kahvalta Sofrası")], "Kahvaltı Sofrası", alt_prob=0.05) == pytest.approx(typo)
    # an alternative that is not the expected letter changes nothing either
    assert score([line("Kahvalta Sofrası", (7, "e", 0.9))], "Kahvaltı Sofrası", alt_prob=0.05) == pytest.approx(typo)


def test_alternatives_are_taken_only_where_the_alignment_matches_them():
    # capitals and letters across lines: Ț read T (alternative Ț), ă read a; the first a's alternative ă is not
    # where the expected ă is, so it stays; case folds as TR's normalisation does
    lines = [line("Mare"), line("Tara", (0, "Ț", 0.35), (1, "ă", 0.4))]
    assert resolve(lines, "Mare Țară", 0.3) == ("Mare Țara", ["T→Ț"])
    assert resolve(lines, "MARE ȚARĂ", 0.3)[0] == "Mare Țara"
    assert resolve(lines, "Mare Țară", 0.38) == ("Mare Tara", [])


def test_a_letter_whose_normal_form_is_two_letters_or_read_as_punctuation_can_be_swapped():
    # ß compares as "ss" (casefolded), one character against one of the expected text's; a letter read as "!"
    # keeps its place where it was doubted
    assert resolve([line("Strabe", (4, "ß", 0.6))], "Straße", 0.3) == ("Straße", ["b→ß"])
    assert resolve([line("L!MA", (1, "I", 0.6))], "LIMA", 0.3) == ("LIMA", ["!→I"])
    assert resolve([line("L!MA")], "LIMA", 0.3) == ("L!MA", [])


def test_the_bench_scores_ladders_with_the_rule_and_reports_its_cost():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_tr_doubt", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_tr_doubt.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    expected = "Kahvaltı Sofrası"
    # torn in the correct render, the typo render read surely: the rule lifts the one, not the other
    renders = {"correct": [line("Kahvalt1 Sofrası", (7, "ı", 0.4))], "typo": [line("Kahvalta Sofrası", (7, "ı", 0.2))],
               "missing": [line("Sofrası")]}
    cases = [{"expected": expected, "script": "turkish", "repeated": False,
              "ocr": {k: OcrResult(tuple(v), 640, 640) for k, v in renders.items()}}]
    off, on = bench.rescore(cases, math.inf), bench.rescore(cases, 0.3)
    assert on[0]["correct"] == 1.0 > off[0]["correct"]
    assert on[0]["typo"] == off[0]["typo"] < 1.0
    assert on[0]["swaps"] == ["1→ı"] and off[0]["swaps"] == []
    report = bench.report("tuning", "Latin diacritics", 0.3, on, off)
    assert "exact render TR>=0.95 1.000" in report and "typo rose 0" in report and "swaps: 1→ı 1" in report
