"""TR's extra tuning sets (vistar.validity.tr_tuning) stay apart from the validation split, and the lone-glyph set
draws what it says."""
from __future__ import annotations

import numpy as np

from vistar.metrics.text_similarity import normalize_text
from vistar.synth.text import PHOTOS
from vistar.validity.tr import EXTRA_PHOTOS, REPEATS, SHORT, VALIDATION, WORDS
from vistar.validity.tr_tuning import LONE_GLYPHS, SPLITS, lone_glyph_cases


def test_tuning_splits_share_no_photo_seed_or_vocabulary_with_validation_and_differ_in_ranges():
    # textures are drawn from the seed (new stripes every poster); photos are fixed images, so none may be shared
    for name, split in SPLITS.items():
        assert not set(split.backgrounds) & set(VALIDATION.backgrounds) & {*PHOTOS, *EXTRA_PHOTOS}, name
        assert split.vocabulary != VALIDATION.vocabulary and split.seed_offset != VALIDATION.seed_offset, name
        # parameter ranges differ from validation's (they may overlap: angles 0-15 hold validation's 5-15)
        assert (split.angles, split.font_sizes, split.canvas) != (VALIDATION.angles, VALIDATION.font_sizes, VALIDATION.canvas)
    assert len({split.seed_offset for split in SPLITS.values()}) == len(SPLITS)
    assert not set(EXTRA_PHOTOS) & set(VALIDATION.backgrounds)


def test_lone_glyphs_are_never_the_validation_posters_short_lines():
    assert LONE_GLYPHS and not set(LONE_GLYPHS) & set(SHORT[VALIDATION.vocabulary::2])
    assert all(len(g) == 1 for g in LONE_GLYPHS)


def test_lone_glyph_posters_end_with_their_glyph_and_are_reproducible():
    cases = lone_glyph_cases(3, 5)
    again = lone_glyph_cases(3, 5)
    allowed = set(WORDS["latin"][SPLITS["photo"].vocabulary::2]) | set(SHORT) | {w for r in REPEATS for w in r.split()}
    for case, same in zip(cases, again):
        words = case["expected"].split()
        assert words[-1] == case["glyph"] and set(words[:-1]) <= allowed
        assert case["expected"] == same["expected"] and np.array_equal(np.asarray(case["image"]), np.asarray(same["image"]))
        assert case["image"].size[0] in SPLITS["photo"].canvas and normalize_text(case["glyph"])


def test_lone_glyph_posters_can_draw_other_glyphs_to_measure_them():
    # the validation posters' bars, drawn on the tuning photos only to measure how the OCR reads them
    cases = lone_glyph_cases(4, 5, ("I", "l"))
    assert {case["glyph"] for case in cases} <= {"I", "l"}
    assert all(case["glyph"] in case["expected"].split() for case in cases)


def test_fine_stripes_are_two_colours_with_stripes_4_to_8_px_wide_along_a_row():
    import random

    from vistar.synth.text import FINE_STRIPES, background

    for seed in range(5):
        pixels = np.asarray(background(FINE_STRIPES, 256, random.Random(seed)))
        assert len(np.unique(pixels.reshape(-1, 3), axis=0)) <= 2
        row = pixels[100].astype(int) @ np.array([65536, 256, 1])
        edges = np.flatnonzero(np.diff(row))
        runs = np.diff(edges)                       # whole stripes cut by the row: half a period each, 4-8 px
        assert len(runs) > 10 and runs.min() >= 3 and runs.max() <= 9
    assert "fine" in SPLITS and SPLITS["fine"].backgrounds == (FINE_STRIPES,)
