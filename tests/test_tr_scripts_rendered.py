"""TR's script policy through the real RapidOCR on rendered posters (ground truth = the text drawn): Latin with
diacritics is scored and ranks a typo above a missing word; Greek and Vietnamese are reported, not scored."""
from __future__ import annotations

import random

import pytest

from vistar.synth.text import background, poster_fonts, render_poster
from vistar.validity.tr import Scorer

SANS = next(f for f in poster_fonts() if f and f.endswith("DejaVuSans.ttf"))


@pytest.fixture(scope="module")
def scorer():
    return Scorer()


def tr(scorer, lines: list[str], expected: str):
    image = render_poster(background("coffee", 512, random.Random(3)), lines, [], font=SANS, font_size=28,
                          ink=(255, 255, 255), stroke=2, angle=6)
    return scorer.score(scorer.ocr(image), expected)


@pytest.mark.slow
def test_polish_and_czech_posters_are_scored_and_rank_typo_above_missing_word(scorer):
    lines = ["Łódź Kraków", "Příliš žluťoučký kůň"]
    expected = " ".join(lines)
    correct = tr(scorer, lines, expected)
    typo = tr(scorer, ["Łódź Kraków", "Příliš žluťoučký kůx"], expected)
    missing = tr(scorer, ["Łódź Kraków", "Příliš kůň"], expected)
    # over the photo some marks are lost (ř read as r, ť as t): half a letter each, so 0.9, not 1
    assert correct.status == "ok" and correct.score >= 0.9, correct.details["recognised"]
    assert correct.score > typo.score > missing.score


@pytest.mark.slow
def test_greek_poster_is_skipped_with_script_and_letters_named(scorer):
    expected = "Καλή όρεξη ΑΘΗΝΑ"
    result = tr(scorer, ["Καλή όρεξη", "ΑΘΗΝΑ"], expected)
    assert result.status == "skipped" and result.score is None
    assert result.details["unreadable"] == ["ή", "ό"] and "Greek ή ό" in result.error   # not in the dictionary
    capitals = tr(scorer, ["ΑΘΗΝΑ ΝΕΡΟ"], "ΑΘΗΝΑ ΝΕΡΟ")                                  # in it, but not scored
    assert capitals.status == "skipped" and "TR does not score Greek" in capitals.error
    greek = Scorer({"scripts": ["Latin", "Greek"], "fold_accents": True})                 # opted in
    opted, missing = tr(greek, ["Καλή όρεξη", "ΑΘΗΝΑ"], expected), tr(greek, ["Καλή", "ΑΘΗΝΑ"], expected)
    assert opted.status == "ok" and opted.score > missing.score


def test_vietnamese_tone_letters_are_skipped_with_the_way_to_opt_in(scorer):
    result = tr(scorer, ["Phở bò Hà Nội"], "Phở bò Hà Nội")
    assert result.status == "skipped" and result.details["unreadable"] == ["ộ", "ở"]
    assert "Latin ộ ở" in result.error and "fold_accents: true" in result.error
