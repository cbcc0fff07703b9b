"""TR's stray-line rule on hand-made OCR lines: photo detail read as text across the text's lines is not text."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from tests.support.ocr_posters import poster, rotated
from vistar.api import OcrLine, OcrResult
from vistar.engine.params import metric_params
from vistar.metrics.text_filters import filter_lines
from vistar.metrics.tr import METRIC
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(None), "TR")


def score(ocr: OcrResult, text: str = "FRESH COFFEE DAILY", **overrides):
    return METRIC.fn({"ocr": ocr}, {"text": text}, replace(PARAMS, **overrides), None)


def test_an_unsure_reading_across_the_text_lines_is_dropped():
    # coat buttons read "C000" at 0.7, running at -10°: 18° across the 8° text
    result = score(poster(rotated("C000", 500, 520, 100, 30, -10.0, conf=0.7)))
    assert result.score == 1.0 and result.details["dropped_lines"]["stray"] == 1


def test_an_unsure_reading_across_the_lines_that_reads_like_a_word_asked_for_counts():
    # a short word boxed roughly (14° across the text) is a word of the text: kept where it is within half its letters
    # of a word asked for ("caj" for "čaj": half a letter of three), dropped where it is not
    ocr = poster(rotated("caj", 500, 480, 60, 30, 22.0, conf=0.89))
    assert score(ocr, "FRESH COFFEE DAILY ČAJ").details["dropped_lines"]["stray"] == 0
    assert score(ocr, "FRESH COFFEE DAILY ČAJ").score == pytest.approx(0.5 * (1 - 0.5 / 22) + 0.5 * (1 - (0.5 / 3) / 4))
    assert score(ocr, "FRESH COFFEE DAILY").details["dropped_lines"]["stray"] == 1
    assert filter_lines(ocr, 0.5, 0.0, stray_confidence=0.9, stray_angle=10.0)[1]["stray"] == 1   # nothing asked


def test_a_sure_reading_across_the_lines_counts():
    # read at 0.95 it is text (a sign in the photo): "fresh coffee daily c000" vs the 3 words asked for
    result = score(poster(rotated("C000", 500, 520, 100, 30, -10.0, conf=0.95)))
    assert result.details["dropped_lines"]["stray"] == 0
    assert result.score == pytest.approx(0.5 * (1 - 5 / 23) + 0.5 * (1 - 1 / 4))


def test_an_unsure_word_running_with_the_text_counts():
    # a word of the text read unsurely, 5° off the text's direction (within stray_angle 10°): a missing word otherwise
    ocr = poster(rotated("OPEN", 500, 480, 160, 40, 3.0, conf=0.7))
    kept, dropped = filter_lines(ocr, 0.5, 0.0, stray_confidence=0.9, stray_angle=10.0)
    assert "OPEN" in [ln.text for ln in kept] and dropped["stray"] == 0
    assert score(ocr, "FRESH COFFEE DAILY OPEN").score == 1.0


def test_the_text_direction_comes_from_surely_read_wide_lines_only():
    # every line read unsurely: nothing says which way the text runs, so nothing is a stray
    lines = (rotated("FRESH", 500, 300, 200, 40, 8.0, conf=0.8), rotated("DOO", 500, 520, 100, 30, -10.0, conf=0.7))
    kept, dropped = filter_lines(OcrResult(lines, 1000, 1000), 0.5, 0.0, stray_confidence=0.9, stray_angle=10.0)
    assert len(kept) == 2 and dropped["stray"] == 0
    # a sure line only as wide as high (a lone "7") does not set the direction either
    lines = (rotated("7", 500, 300, 30, 40, 0.0), rotated("DOO", 500, 520, 100, 30, 20.0, conf=0.7))
    assert filter_lines(OcrResult(lines, 1000, 1000), 0.5, 0.0, stray_confidence=0.9, stray_angle=10.0)[1]["stray"] == 0


def test_direction_is_compared_modulo_a_half_turn():
    # the same line with its corners listed from the other end runs at 188° - the same direction as 8°
    flipped = rotated("OPEN", 500, 480, 160, 40, 188.0, conf=0.7)
    kept, dropped = filter_lines(poster(flipped), 0.5, 0.0, stray_confidence=0.9, stray_angle=10.0)
    assert dropped["stray"] == 0 and len(kept) == 4


def test_the_rule_is_off_with_the_defaults_of_filter_lines():
    kept, dropped = filter_lines(poster(rotated("C000", 500, 520, 100, 30, -10.0, conf=0.7)), 0.5, 0.0)
    assert len(kept) == 4 and dropped["stray"] == 0


def test_steep_text_has_no_direction_so_no_line_is_a_stray():
    """Text running at 50 degrees: `text_angle` takes no direction from lines at 45 degrees or more, so the stray
    rule has no sure line to compare with and keeps an unsure word that runs with the text."""
    def tilted(text, cx, cy, w, h, deg, conf):
        a = math.radians(deg)
        c, s = math.cos(a), math.sin(a)
        return OcrLine(text, conf, tuple((cx + x * c - y * s, cy + x * s + y * c) for x, y in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))))

    for deg in (30, 50):
        lines = (tilted("HELLO WORLD", 500, 500, 400, 40, deg, 0.98), tilted("AGAIN", 600, 650, 200, 40, deg, 0.8))
        kept, dropped = filter_lines(OcrResult(lines, 1000, 1000), 0.5, 0.0, 0.0, math.inf, "", 0.9, 10.0)
        assert dropped["stray"] == 0 and len(kept) == 2, deg


def test_an_unsure_reading_of_no_asked_word_off_the_text_is_clutter():
    # a row of coins read "DOO" at 0.7 running with the 8° text, about 3.6 line heights under its last line
    buttons = rotated("DOO", 500, 600, 100, 30, 8.0, conf=0.7)
    result = score(poster(buttons))                                                  # shipped clutter_gap 3
    assert result.score == 1.0 and result.details["dropped_lines"]["clutter"] == 1
    assert score(poster(buttons), clutter_gap=5.0).details["dropped_lines"]["clutter"] == 0   # not that far
    kept = score(poster(buttons), clutter_gap=math.inf)                              # the rule off: an extra word
    assert kept.details["dropped_lines"]["clutter"] == 0 and kept.score < 1.0


def test_clutter_keeps_a_word_of_the_text_near_the_text_or_read_surely():
    far_word = rotated("OPFN", 500, 600, 100, 30, 8.0, conf=0.7)     # OPEN read badly (one letter of 4) stays a word
    assert score(poster(far_word), "FRESH COFFEE DAILY OPEN", clutter_gap=2.0).details["dropped_lines"]["clutter"] == 0
    near = rotated("DOO", 500, 470, 100, 30, 8.0, conf=0.7)         # right under the last line
    assert score(poster(near), clutter_gap=2.0).details["dropped_lines"]["clutter"] == 0
    sure = rotated("DOO", 500, 600, 100, 30, 8.0, conf=0.95)        # a sign in the photo: text
    assert score(poster(sure), clutter_gap=2.0).details["dropped_lines"]["clutter"] == 0


def test_clutter_needs_a_sure_line():
    unsure = OcrResult(tuple(replace(ln, confidence=0.8) for ln in poster().lines)
                       + (rotated("DOO", 500, 600, 100, 30, 8.0, conf=0.7),), 1000, 1000)
    kept, dropped = filter_lines(unsure, 0.5, 0.0, expected="FRESH COFFEE DAILY", stray_confidence=0.9,
                                 clutter_gap=2.0)
    assert len(kept) == 4 and dropped["clutter"] == 0
