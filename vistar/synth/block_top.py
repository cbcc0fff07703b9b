"""A ball or cube on a block's top face, seen from above: the contact-in-view family of PSC's validity sets.

Resting, the solid touches the face at a point (a ball) or along its bottom (a cube) hidden beneath it; sunk,
it meets the face along an intersection curve in view. The camera is above the top face's plane, so the face is
seen from above (docs/metrics/psc.md, "contact in view"). The top is square unless ELONGATION asks for a long
one (a table, a book), whose foreshortening no longer gives the camera's elevation by itself.
"""
from __future__ import annotations

import numpy as np

from .scenes import Box, solid

TOP_PLACEMENTS = ("sunk", "resting")
SQUARE = (1.0, 1.0)


def on_block_top(rng: np.random.Generator, placement: str, shape: str = "ball",
                 elongation: tuple[float, float] = SQUARE) -> list:
    """A low block and a ball (radius r) or cube (half-size r) on its top face: "resting" sets it on the face,
    "sunk" lowers it 30–90 % of r into the block. The solid lies wholly over the face. ELONGATION (low, high):
    the top's long side over its short side, drawn in that range, the long side across the image or along the
    view at even odds; r is then at most 0.8 of the short half-side. The square default draws nothing more, so
    its layouts are the same as before the option."""
    half, height = rng.uniform(0.7, 1.0), rng.uniform(0.3, 0.7)
    r = rng.uniform(0.25, 0.45) if shape == "ball" else rng.uniform(0.2, 0.35)
    offsets = rng.uniform(-0.6, 0.6, size=2)
    sink_frac = rng.uniform(0.3, 0.9)
    half_x = half_z = half
    if elongation != SQUARE:
        short = half / rng.uniform(*elongation)
        half_x, half_z = (half, short) if rng.uniform() < 0.5 else (short, half)
        r = min(r, 0.8 * short)
    if placement == "resting":
        y = height + r
    elif placement == "sunk":
        y = height + r - sink_frac * r
    else:
        raise ValueError(f"unknown placement '{placement}' ({', '.join(TOP_PLACEMENTS)})")
    box = Box((-half_x, 0.0, -half_z), (half_x, height, half_z))
    return [box, solid(shape, (offsets[0] * (half_x - r), y, offsets[1] * (half_z - r)), r)]
