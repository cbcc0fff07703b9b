"""The OCR's second reading of lone-glyph boxes: geometry and the keep-the-surer rule (no model), and one rendered
tuning poster whose lone digit only the upright reading recovers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vistar.features import ocr_batched
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

    monkeypatch.setattr(ocr_batched, "_recognise", recognise)
    reread_glyphs(Engine(), [None] * 3, boxes, texts, scores)
    assert texts == ["5", "FRESH COFFEE", "7"] and scores == [1.0, 0.99, 0.95]
    assert len(seen) == 2 and np.allclose(seen[0], upright_box(boxes[0]))   # the word box is not read again


def test_no_glyph_box_no_second_reading(monkeypatch):
    monkeypatch.setattr(ocr_batched, "_recognise", lambda *a: pytest.fail("recogniser called"))
    texts, scores = ["FRESH"], [0.9]
    reread_glyphs(Engine(), [None], [box(200, 30)], texts, scores)
    assert texts == ["FRESH"] and scores == [0.9]


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
