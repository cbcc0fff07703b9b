"""Lone glyphs: an upright re-read of boxes no wider than high (not the second reading of every line: ocr_second_reading).

A lone digit or letter on a line of its own ("5", "1", "6" under a poster) gets a box about as wide as the glyph,
with no margin, and when that box is at least 1.5 times as tall as wide RapidOCR turns the crop by 90° as if it
were vertical text. Either way the recogniser, trained on lines with some background around them, reads it unsurely
("5" lying on its side at 0.35, a tight "6" at 0.55) and the line is dropped. Such a box is read a second time in a
square crop of its height plus `MARGIN` of it on every side, the glyph upright in the middle (a square is never
turned); the surer reading is kept. Vertical text (a column of CJK characters) keeps its turned reading: squeezed
upright it comes out less surely. docs/metrics/tr_reading.md, Lone glyphs.
"""
from __future__ import annotations

import numpy as np

from ..api import text_corners
from . import ocr_steps

MARGIN = 0.1    # of the box's height, added on every side of the upright crop


def _sides(box: np.ndarray) -> tuple[float, float]:
    """(width, height) as RapidOCR's crop measures them: the longer of each pair of opposite edges."""
    box = np.asarray(text_corners(box), np.float64)
    width = max(np.linalg.norm(box[0] - box[1]), np.linalg.norm(box[2] - box[3]))
    height = max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2]))
    return float(width), float(height)


def is_glyph_box(box: np.ndarray) -> bool:
    """No wider than high: one character (a word of two or more is wider)."""
    width, height = _sides(box)
    return 0 < width <= height


def upright_box(box: np.ndarray) -> np.ndarray:
    """The box widened, about its centre and along its own axes, to a square of its height plus `MARGIN` of the
    height on every side: a crop RapidOCR does not turn, with the glyph upright in its middle."""
    box = np.asarray(text_corners(box), np.float64)
    width, height = _sides(box)
    centre = box.mean(0)
    across = (box[1] - box[0] + box[2] - box[3]) / 2
    down = (box[3] - box[0] + box[2] - box[1]) / 2
    across /= max(np.linalg.norm(across), 1e-9)
    down /= max(np.linalg.norm(down), 1e-9)
    half = max(width, height) / 2 + MARGIN * height
    return np.array([centre + sx * half * across + sy * half * down for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))],
                    np.float32)


def reread_glyphs(engine, images: list[np.ndarray], boxes: list[np.ndarray], texts: list, scores: list) -> None:
    """For every glyph box (`boxes[k]` detected on `images[k]`, read as `texts[k]` at `scores[k]`), read the
    upright crop too and keep that reading, in place, where it is surer and both are one or two characters (a tall
    box of vertical text read as a word keeps its word). One recogniser call for all of them."""
    glyphs = [k for k, box in enumerate(boxes) if is_glyph_box(box)]
    if not glyphs:
        return
    crops = [engine.crop_text_regions(images[k], upright_box(boxes[k])[None])[0] for k in glyphs]
    again, confidence, _ = ocr_steps.recognise(engine, crops)
    for k, text, score in zip(glyphs, again, confidence):
        if 0 < len(text.strip()) <= 2 and len(str(texts[k]).strip()) <= 2 and score > scores[k]:
            texts[k], scores[k] = text, score
