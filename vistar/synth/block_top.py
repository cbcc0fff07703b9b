"""A ball or cube on a block's top face, seen from above: the contact-in-view family of PSC's validity sets.

Resting, the solid touches the face at a point (a ball) or along its bottom (a cube) hidden beneath it; sunk,
it meets the face along an intersection curve in view. The camera is above the top face's plane, so the face is
seen from above (docs/metrics/psc.md, "contact in view").
"""
from __future__ import annotations

import numpy as np

from .scenes import Box, solid

TOP_PLACEMENTS = ("sunk", "resting")


def on_block_top(rng: np.random.Generator, placement: str, shape: str = "ball") -> list:
    """A low block and a ball (radius r) or cube (half-size r) on its top face: "resting" sets it on the face,
    "sunk" lowers it 30–90 % of r into the block. The solid lies wholly over the face."""
    half, height = rng.uniform(0.7, 1.0), rng.uniform(0.3, 0.7)
    box = Box((-half, 0.0, -half), (half, height, half))
    r = rng.uniform(0.25, 0.45) if shape == "ball" else rng.uniform(0.2, 0.35)
    x, z = rng.uniform(-0.6, 0.6, size=2) * (half - r)
    sink = rng.uniform(0.3, 0.9) * r
    if placement == "resting":
        y = height + r
    elif placement == "sunk":
        y = height + r - sink
    else:
        raise ValueError(f"unknown placement '{placement}' ({', '.join(TOP_PLACEMENTS)})")
    return [box, solid(shape, (x, y, z), r)]
