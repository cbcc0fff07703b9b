"""Reading the ink (vistar.features.ocr_ink): the clean crop's ink is the text that was drawn, over stripes."""
from __future__ import annotations

import random

import numpy as np
import pytest
from PIL import Image, ImageDraw

from vistar.api import parse
from vistar.features.ocr import OcrSettings
from vistar.features.ocr_ink import clean_crop, ink_mask
from vistar.synth.text import background, load_font, poster_fonts

FONT = next(f for f in poster_fonts() if f and f.endswith("DejaVuSans.ttf"))


def striped_line(seed: int, ink: tuple[int, int, int], stroke: int) -> tuple[np.ndarray, np.ndarray]:
    """A 360×60 crop of the stripes texture with "Grüße Köln" drawn on it (BGR, as RapidOCR crops), and the mask of
    the letters' fill drawn alone (the expectation: what is ink, independent of the crop's colours)."""
    base = background("stripes", 512, random.Random(seed)).crop((0, 0, 360, 60))
    face = load_font(FONT, 30)
    truth = Image.new("L", base.size, 0)
    ImageDraw.Draw(truth).text((10, 10), "Grüße Köln", font=face, fill=255)
    ImageDraw.Draw(base).text((10, 10), "Grüße Köln", font=face, fill=ink, stroke_width=stroke,
                              stroke_fill=tuple(255 - v for v in ink))
    return np.asarray(base)[:, :, ::-1], np.asarray(truth) > 127


@pytest.mark.parametrize("seed, ink, stroke", [(1, (20, 20, 20), 0), (2, (240, 240, 200), 1), (4, (10, 40, 30), 2),
                                               (5, (230, 250, 240), 2), (6, (35, 10, 50), 1)])
def test_the_ink_of_text_over_stripes_is_the_drawn_letters(seed, ink, stroke):
    crop, truth = striped_line(seed, ink, stroke)
    mask = ink_mask(crop)
    assert mask is not None
    iou = (mask & truth).sum() / (mask | truth).sum()
    assert iou >= 0.75, iou     # anti-aliased rims fall either way; an outline taken for the fill scores 0
    clean = clean_crop(crop)
    assert clean is not None and clean.shape == crop.shape and (clean[mask] == 0).all() and (clean[~mask] == 255).all()


def test_a_crop_of_one_colour_has_no_ink():
    assert ink_mask(np.full((40, 200, 3), 128, np.uint8)) is None
    assert ink_mask(np.zeros((3, 200, 3), np.uint8)) is None


def test_ink_reread_setting():
    assert parse(OcrSettings, {"ink_reread": 0.9}, "features.ocr").ink_reread == pytest.approx(0.9)
    with pytest.raises(ValueError, match="ink_reread"):
        parse(OcrSettings, {"ink_reread": -0.1}, "features.ocr")
