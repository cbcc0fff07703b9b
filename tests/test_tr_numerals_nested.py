"""TR's numeral and nested-box rules on hand-made OCR lines: round things read as numbers over the text, and a
letter a second, smaller box read again inside a line, are not text."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from tests.support.ocr_posters import poster, rotated
from vistar.engine.params import metric_params
from vistar.metrics.text_filters import filter_lines, nested_lines, numeral_lines
from vistar.metrics.tr import METRIC, tr_score
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(None), "TR")


def score(ocr, text: str = "FRESH COFFEE DAILY", **overrides):
    return METRIC.fn({"ocr": ocr}, {"text": text}, replace(PARAMS, **overrides), None)


def test_coat_buttons_read_as_zeros_on_the_text_are_dropped_wherever_they_lie():
    # "0000" read at 0.87 right under the last line (the clutter rule wants 3 line heights): not an extra word
    buttons = rotated("0000", 500, 470, 100, 30, 8.0, conf=0.87)
    result = score(poster(buttons))
    assert result.score == 1.0 and result.details["dropped_lines"]["numerals"] == 1
    assert result.details["dropped_lines"]["clutter"] == 0
    # a "C" the recogniser doubted in front of them: still more digits than letters
    assert score(poster(replace(buttons, text="C000"))).score == 1.0
    # without the rule the buttons are a fourth word: 1 - 5/23 and 1 - 1/4
    off = filter_lines(poster(buttons), 0.5, 0.0, expected="FRESH COFFEE DAILY")
    assert off[1]["numerals"] == 0
    assert tr_score("fresh coffee daily 0000", "FRESH COFFEE DAILY", 0.5)["score"] == pytest.approx(
        0.5 * (1 - 5 / 23) + 0.5 * (1 - 1 / 4))


def test_numbers_read_surely_asked_for_or_half_letters_stay():
    near = dict(cx=500, cy=470, w=100, h=30, angle=8.0)
    # a number read surely is text (a sign in the photo)
    assert numeral_lines([rotated("0000", **near, conf=0.95)], "FRESH", 0.9) == set()
    # the asked text holds the digit: a number of the text read unsurely is kept
    assert numeral_lines([rotated("0000", **near, conf=0.7)], "SALE 50", 0.9) == set()
    assert numeral_lines([rotated("0000", **near, conf=0.7)], "OPEN 24 7", 0.9) == {0}
    # half digits is a letter read as a digit ("r0" for "Ærø"), and a misread asked word is a reading of it
    assert numeral_lines([rotated("r0", **near, conf=0.6)], "Ærø", 0.9) == set()
    assert numeral_lines([rotated("50LE", **near, conf=0.6)], "SOLE", 0.9) == set()   # 2 of 4 letters off
    assert numeral_lines([rotated("DOOO", **near, conf=0.6)], "SOLE", 0.9) == set()   # letters O, not zeros
    assert numeral_lines([rotated("0906", **near, conf=0.6)], "SOLE", 0.9) == {0}


def test_a_small_box_inside_a_line_reads_its_letters_again():
    # "dyy" in a 36 px high box at 8°, and the detector's second box over its last stroke read "V" (10 px high)
    word = rotated("dyy", 500, 490, 60, 36, 8.0)
    inner = rotated("V", 522, 490, 9, 12, 8.0, conf=0.97)
    assert nested_lines([word, inner], 0.75, 0.5) == {1}
    result = score(poster(word, inner), "FRESH COFFEE DAILY dyy")
    assert result.score == 1.0 and result.details["dropped_lines"]["nested"] == 1
    assert score(poster(word, inner), "FRESH COFFEE DAILY dyy", nested_share=math.inf).score < 1.0   # the rule off


def test_a_short_word_as_tall_as_its_line_or_beside_it_is_not_nested():
    word = rotated("records SALE", 500, 400, 300, 36, 8.0)
    # a word of the text as tall as its neighbours, even where a tilted line's levelled box takes it in
    assert nested_lines([word, rotated("TO", 540, 400, 36, 26, 0.0)], 0.75, 0.5) == set()
    # a small box mostly beside the line (a third inside), and one as long as the line it touches
    assert nested_lines([word, rotated("ok", 650, 400, 30, 12, 8.0)], 0.75, 0.5) == set()
    assert nested_lines([rotated("AB", 500, 400, 60, 36, 8.0), rotated("CD", 500, 400, 20, 12, 8.0)], 0.75, 0.5) == set()
    # three letters are a word of their own, not a piece read twice
    assert nested_lines([word, rotated("SAL", 560, 400, 40, 12, 8.0)], 0.75, 0.5) == set()
