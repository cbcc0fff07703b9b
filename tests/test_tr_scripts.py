"""TR's script policy: which expected texts are scored, which are reported `skipped` (script and letters named),
and how accented Latin, repeated words and typos against missing words score (hand-computed values)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from vistar.api import OcrLine, OcrResult
from vistar.engine.params import metric_params
from vistar.metrics.text_scripts import script_of, support, unreadable, unscored_scripts
from vistar.metrics.tr import METRIC
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(None), "TR")
SCORED = ("Latin", "Han", "Hiragana", "Katakana")
# A hand-made alphabet shaped like the recogniser's: Latin with Latin-1 and Latin Extended-A letters (no Vietnamese
# tone letters), unaccented Greek, digits; no Cyrillic.
LATIN = [chr(c) for c in range(0xC0, 0x180) if chr(c).isalpha()]  # Latin-1 Supplement and Latin Extended-A letters
ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ơưƠƯ"
                     "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩαβγδεζηθικλμνξοπρστυφχψω" + "".join(LATIN))


def tr(read: str, expected: str, **overrides):
    lines = (OcrLine(read, 0.99, ((10, 10), (600, 10), (600, 50), (10, 50))),) if read else ()
    return METRIC.fn({"ocr": OcrResult(lines, 1000, 1000, ALPHABET)}, {"text": expected}, replace(PARAMS, **overrides), None)


@pytest.mark.parametrize("char, script", [("a", "Latin"), ("ł", "Latin"), ("ở", "Latin"), ("Ж", "Cyrillic"),
                                          ("λ", "Greek"), ("漢", "Han"), ("か", "Hiragana"), ("7", "Common")])
def test_script_of(char, script):
    assert script_of(char) == script


@pytest.mark.parametrize("expected", ["Crème brûlée", "Grüße aus Köln", "Łódź Kraków", "Příliš žluťoučký kůň",
                                      "Señor Niño", "İstanbul Şehir"])
def test_latin_with_diacritics_in_the_alphabet_is_scored(expected):
    assert support(expected, ALPHABET, SCORED) == (None, {})
    assert tr(expected, expected).score == 1.0


def test_accented_latin_typo_missing_and_lost_accent_by_hand():
    # "łódź kraków": 11 characters, 2 words of 4 and 6 letters
    exp = "Łódź Kraków"
    lost = tr("Łódź Krakow", exp)     # ó→o: Lev 1, without accents 0 → 0.5 of a character
    assert lost.details["char"] == pytest.approx(1 - 0.5 / 11) and lost.details["token"] == pytest.approx(1 - (0.5 / 6) / 2)
    typo = tr("Łódź Krakuw", exp)     # ó→u: a wrong letter either way → 1 character, 1/6 of a word
    assert typo.details["char"] == pytest.approx(1 - 1 / 11) and typo.details["token"] == pytest.approx(1 - (1 / 6) / 2)
    missing = tr("Łódź", exp)          # " kraków" deleted: 7 characters, one word of two
    assert missing.details["char"] == pytest.approx(1 - 7 / 11) and missing.details["token"] == pytest.approx(1 / 2)
    assert typo.score == pytest.approx((10 / 11 + 11 / 12) / 2) and missing.score == pytest.approx((4 / 11 + 1 / 2) / 2)
    assert 1.0 > lost.score > typo.score > missing.score


def test_dotted_capital_i_read_as_i_is_not_an_error():
    assert tr("istanbul", "İstanbul").score == 1.0                      # case-insensitive: İ and i are one letter
    assert tr("istanbul", "İstanbul", case_sensitive=True).score < 1.0  # asked to count case, it differs


def test_letters_outside_the_alphabet_are_named_with_their_script():
    result = tr("", "ДОБРО Phở")
    assert result.status == "skipped" and result.score is None
    assert result.details["unreadable"] == ["Б", "Д", "О", "Р", "ở"] and result.details["scripts"] == ["Cyrillic", "Latin"]
    assert "Cyrillic Б Д О Р" in result.error and "Latin ở" in result.error


def test_vietnamese_tone_letters_skip_by_default_and_score_with_accents_folded():
    # ở is not in the alphabet, its base o is: the message says so, and fold_accents opts in
    result = tr("Pho bo", "Phở bò")
    assert result.status == "skipped" and "fold_accents: true" in result.error and result.details["unreadable"] == ["ở"]
    assert unreadable("Phở bò", ALPHABET, fold_accents=True) == []
    assert tr("Pho bo", "Phở bò", fold_accents=True).score == 1.0


def test_a_script_in_the_alphabet_but_not_scored_is_reported():
    # Greek capitals are all in the alphabet; Greek is not a scored script (measured unreliable): skipped, named
    result = tr("ΨΩΜΙ", "ΨΩΜΙ")
    assert result.status == "skipped" and result.details["unreadable"] == []
    assert result.details["script_letters"] == {"Greek": ["Ι", "Μ", "Ψ", "Ω"]} and "Greek" in result.error
    assert tr("ΨΩΜΙ", "ΨΩΜΙ", scripts=["Latin", "Greek"]).score == 1.0


@pytest.mark.parametrize("expected", ["10 µm", "π = 3.14", "5Ω resistor", "ΔT 4 K"])
def test_a_lone_greek_letter_in_latin_text_is_a_symbol(expected):
    # µ (NFKC μ), π, Ω, Δ as units and symbols: no word of two or more Greek letters, so the text is not Greek
    assert unscored_scripts(expected, SCORED) == {}
    assert tr(expected, expected).score == 1.0


def test_a_dropped_repeated_word_costs_a_whole_word():
    # "no no no" → "no no": 3 characters of 8, one word of 3 (a set of words would see no change)
    result = tr("no no", "no no no")
    assert result.details["char"] == pytest.approx(1 - 3 / 8) and result.details["token"] == pytest.approx(1 - 1 / 3)
    assert result.score == pytest.approx((5 / 8 + 2 / 3) / 2)


def test_a_typo_costs_less_than_a_missing_word():
    # "crème brûlée": 12 characters; brûlée→brûlés is 1 of 6 letters; crème missing is 6 characters, one word of two
    exp = "Crème brûlée"
    typo, missing = tr("Crème brûlés", exp), tr("brûlée", exp)
    assert typo.score == pytest.approx((11 / 12 + (1 - (1 / 6) / 2)) / 2)
    assert missing.score == pytest.approx((6 / 12 + 1 / 2) / 2)
    assert typo.score > missing.score


def test_scripts_given_as_one_name_is_read_as_a_list():
    # a YAML user writing `scripts: Latin` must not get the letters L, a, t, i, n as script names
    assert tr("GRAND", "GRAND", scripts="Latin").score == 1.0
    assert tr("ΨΩΜΙ", "ΨΩΜΙ", scripts="Latin").status == "skipped"
