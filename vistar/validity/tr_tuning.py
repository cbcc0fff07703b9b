"""TR tuning sets beyond `TUNING` (vistar.validity.tr): what the OCR's lone-glyph reading and TR's stray-line rule
were chosen on. Never the validation split: the tuning photos and vocabulary, seeds of their own, and lone glyphs
none of which the validation posters use.
"""
from __future__ import annotations

import random
from dataclasses import replace

from ..synth.text import FINE_STRIPES, PHOTOS, TEXTURES
from .tr import EXTRA_PHOTOS, SHORT, TUNING, Split, sample_poster

# the tuning photos and all four textures, rotation to 15°, text down to 14 px (the stripes the first look failed on)
HARD_TUNING = Split(40_000, (0.0, 15.0), (14, 34), (512, 576), PHOTOS[::2] + TEXTURES, 0)
# the tuning photos and four more (EXTRA_PHOTOS): photo detail read as text
PHOTO_TUNING = Split(60_000, (0.0, 15.0), (14, 34), (512, 576), PHOTOS[::2] + EXTRA_PHOTOS, 0)
# small text (15-24 px) on 768² crops of the coins photo: rows of coins read "000", "0006" at 0.5-0.8, the
# validation photo's coat buttons again (docs/metrics/tr.md, stray lines)
COIN_TUNING = Split(90_000, (0.0, 15.0), (10, 16), (768,), ("coins",), 0)
# diagonal hard-edged stripes alone (the texture most validation posters that miss "exact render TR >= 0.95" lie
# on; TUNING has none, HARD_TUNING few): marks dropped, word spaces lost, words cut by the detector
STRIPE_TUNING = Split(150_000, (0.0, 13.0), (18, 34), (512, 576), ("stripes",), 0)
# stripes as thin as the strokes (period 8-16 px), where the strokes look sees every pixel as a stroke and gives
# no view: what the stripes look (features.ocr.second_look_stripes) was chosen on
FINE_STRIPE_TUNING = Split(170_000, (0.0, 15.0), (14, 34), (512, 576), (FINE_STRIPES,), 0)
SPLITS = {"tuning": TUNING, "hard": HARD_TUNING, "photo": PHOTO_TUNING, "coins": COIN_TUNING, "stripes": STRIPE_TUNING,
          "fine": FINE_STRIPE_TUNING}

# one-character lines: digits and capitals the validation posters never use alone (theirs: SHORT[1::2])
LONE_GLYPHS = tuple(g for g in "2 3 4 6 7 8 9 A E H K R T".split() if g not in SHORT[1::2])
LONE_GLYPH_TUNING = replace(PHOTO_TUNING, seed_offset=80_000)
# the same over both stripe textures: a lone glyph the detector's sure first map may hold no box for
LONE_GLYPH_STRIPES = replace(STRIPE_TUNING, seed_offset=190_000, backgrounds=("stripes", FINE_STRIPES))


def lone_glyph_cases(n: int, seed: int, glyphs: tuple[str, ...] = LONE_GLYPHS,
                     split: Split = LONE_GLYPH_TUNING) -> list[dict]:
    """`n` Latin posters over SPLIT's backgrounds (the tuning photos, or LONE_GLYPH_STRIPES), each ending with a
    line of one glyph (GLYPHS, by default LONE_GLYPHS; others only to measure how the OCR reads them, never to
    choose a parameter on): the expected text, the glyph and the correct render (a PIL image)."""
    rng, cases = random.Random(seed + split.seed_offset), []
    while len(cases) < n:
        poster = sample_poster(rng, split, "latin")
        glyph = rng.choice(glyphs)
        poster.title.append([glyph])
        try:
            image = poster.image()
        except ValueError:
            continue
        cases.append({"expected": poster.text(), "glyph": glyph, "image": image, "backdrop": poster.backdrop})
    return cases
