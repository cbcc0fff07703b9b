"""The OCR's upright re-read of lone-glyph boxes: geometry and the keep-the-surer rule (no model), and one rendered
tuning poster whose lone digit only the upright reading recovers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vistar.features import ocr_batched, ocr_steps
from vistar.features.ocr_glyphs import MARGIN, is_glyph_box, reread_glyphs, upright_box


def box(w: float, h: float, angle: float = 0.0, cx: float = 50.0, cy: float = 50.0) -> np.ndarray:
    a = math.radians(angle)
    u, v = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
    return np.array([[cx, cy] + sx * w / 2 * u + sy * h / 2 * v for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])


def test_glyph_boxes_are_no_wider_than_high():
    assert is_glyph_box(box(10, 20)) and is_glyph_box(box(20, 20)) and is_glyph_box(box(10, 20, angle=30))
    assert not is_glyph_box(box(40, 20)) and not is_glyph_box(box(0, 20))


def test_upright_box_is_a_square_of_the_height_plus_margins_about_the_centre():
    side = 20 + 2 * MARGIN * 20
    assert np.allclose(upright_box(box(10, 20)), box(side, side), atol=1e-4)
    turned = upright_box(box(10, 20, angle=12.0, cx=100, cy=70))
    assert np.allclose(turned, box(side, side, angle=12.0, cx=100, cy=70), atol=1e-4)   # along the box's own axes
    assert turned.dtype == np.float32


class Engine:
    """Crops are the boxes themselves, so the test sees which boxes were cropped."""

    def crop_text_regions(self, image, boxes):
        return [np.asarray(b) for b in boxes]


def test_the_surer_reading_of_a_glyph_box_is_kept(monkeypatch):
    boxes = [box(10, 20), box(200, 30), box(12, 20)]
    texts, scores = ["S", "FRESH COFFEE", "7"], [0.35, 0.99, 0.95]
    seen = []

    def recognise(engine, crops):   # the upright crops read "5" surely and "1" less surely than "7" was
        seen.extend(crops)
        return ["5", "1"], [1.0, 0.6], [(), ()]

    monkeypatch.setattr(ocr_steps, "recognise", recognise)
    reread_glyphs(Engine(), [None] * 3, boxes, texts, scores)
    assert texts == ["5", "FRESH COFFEE", "7"] and scores == [1.0, 0.99, 0.95]
    assert len(seen) == 2 and np.allclose(seen[0], upright_box(boxes[0]))   # the word box is not read again


def test_no_glyph_box_no_upright_reread(monkeypatch):
    monkeypatch.setattr(ocr_steps, "recognise", lambda *a: pytest.fail("recogniser called"))
    texts, scores = ["FRESH"], [0.9]
    reread_glyphs(Engine(), [None], [box(200, 30)], texts, scores)
    assert texts == ["FRESH"] and scores == [0.9]


@pytest.mark.slow
def test_a_lone_digit_of_a_tuning_poster_is_read_upright(monkeypatch):
    # lone-glyph tuning poster 18 (seed 0): a "6" under the text over the astronaut photo, detector box score 0.24,
    # read 0.55 in RapidOCR's tight crop: dropped; read upright in a square crop: 1.0
    from vistar.features.ocr import OcrSettings, RapidOcrBackend
    from vistar.validity.tr_tuning import lone_glyph_cases

    case = lone_glyph_cases(19, 0)[18]
    assert case["glyph"] == "6"
    image = np.asarray(case["image"])
    backend = RapidOcrBackend(OcrSettings())
    assert "6" in [ln.text for ln in backend(image) if ln.confidence >= 0.9]
    monkeypatch.setattr(ocr_batched, "reread_glyphs", lambda *a: None)
    assert "6" not in [ln.text for ln in backend(image) if ln.confidence >= 0.5]


@pytest.mark.parametrize("tilt", [-20.0, -15.0, 8.0, 15.0, 20.0])
def test_a_tilted_narrow_box_in_rapidocrs_corner_order_is_a_glyph_along_the_text(tilt):
    """RapidOCR orders a box's corners by x: for a 10x40 box tilted by 15 degrees or more the first edge it gives is
    a side. `text_corners` restores the reading order, so the box is still a glyph box, runs at the text's angle,
    and a line read unsurely there is no stray."""
    import cv2
    from rapidocr.ch_ppocr_det.utils import DBPostProcess

    from vistar.api import OcrLine, OcrResult, text_corners
    from vistar.api.ocr import line_angle, line_height, line_width
    from vistar.metrics.text_filters import filter_lines

    mini_boxes = DBPostProcess.__new__(DBPostProcess).get_mini_boxes

    def detected(cx, cy, w, h):   # the box as the detector's post-processing returns it
        return mini_boxes(cv2.boxPoints(((cx, cy), (w, h), tilt)).astype(np.float32).reshape(-1, 1, 2))[0]

    glyph = detected(500, 600, 10, 40)
    assert is_glyph_box(glyph)
    line = OcrLine("I", 0.8, tuple(map(tuple, glyph.tolist())))
    assert line_angle(line) == pytest.approx(tilt, abs=0.5)
    assert (line_width(line), line_height(line)) == pytest.approx((10, 40), abs=0.5)
    assert np.allclose(upright_box(glyph), upright_box(np.asarray(text_corners(box(10, 40, tilt, 500, 600)))), atol=0.5)
    text = [OcrLine(t, 0.99, tuple(map(tuple, detected(500, y, 300, 40).tolist()))) for t, y in (("FRESH COFFEE", 300), ("DAILY", 380))]
    kept, dropped = filter_lines(OcrResult(tuple(text + [line]), 1000, 1000), 0.5, 0.0, 0.0, math.inf, "", 0.9, 10.0)
    assert dropped["stray"] == 0 and line in kept


def test_corner_order_is_clockwise_from_the_rightward_edge():
    from vistar.api import text_corners

    square = [(0, 0), (10, 0), (10, 10), (0, 10)]
    for k in range(4):   # any starting corner, either direction
        assert text_corners(square[k:] + square[:k]) == tuple(map(tuple, np.asarray(square, float).tolist()))
        assert text_corners((square[k:] + square[:k])[::-1]) == tuple(map(tuple, np.asarray(square, float).tolist()))


def test_an_upright_reread_replaces_only_a_glyph_with_a_glyph(monkeypatch):
    """A tall box of vertical text read as a word keeps its reading even if one upright character reads surer, and
    an upright crop read as a word does not replace a glyph."""
    monkeypatch.setattr(ocr_steps, "recognise", lambda engine, crops: (["東", "10 20"], [0.99, 0.99], [(), ()]))
    texts, scores = ["東京都", "7"], [0.8, 0.6]
    reread_glyphs(Engine(), [None] * 2, [box(20, 60), box(10, 20)], texts, scores)
    assert texts == ["東京都", "7"] and scores == [0.8, 0.6]
