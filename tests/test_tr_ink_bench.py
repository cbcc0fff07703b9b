"""benchmarks/bench_tr_ink.py measures what it says: the clean crop's ink is the text that was drawn, over stripes."""
from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from vistar.synth.text import background, load_font, poster_fonts

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_tr_ink.py"
if str(BENCH.parent) not in sys.path:   # as when run as a script: the benches import their shared helpers
    sys.path.insert(0, str(BENCH.parent))
_spec = importlib.util.spec_from_file_location("bench_tr_ink", BENCH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
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
    mask = bench.ink_mask(crop)
    assert mask is not None
    iou = (mask & truth).sum() / (mask | truth).sum()
    assert iou >= 0.75, iou     # anti-aliased rims fall either way; an outline taken for the fill scores 0
    clean = bench.clean_crop(crop)
    assert clean is not None and clean.shape == crop.shape and (clean[mask] == 0).all() and (clean[~mask] == 255).all()


def test_a_crop_of_one_colour_has_no_ink():
    assert bench.ink_mask(np.full((40, 200, 3), 128, np.uint8)) is None
    assert bench.ink_mask(np.zeros((3, 200, 3), np.uint8)) is None


def test_the_reread_is_undone_on_leaving():
    shipped = bench.ocr_batched._detect, bench.ocr_batched.reread_glyphs
    with bench.InkReread(1.01):
        assert bench.ocr_batched.reread_glyphs is not shipped[1]
    assert (bench.ocr_batched._detect, bench.ocr_batched.reread_glyphs) == shipped
