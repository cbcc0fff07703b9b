"""A cube on a top face seen from above: how deep it is sunk, from its own faces' sizes in the image.

A resting cube's bottom edge lies on the face in view as a sunk cube's intersection line does, and both rise from
it as a vertical face, so depth at the contact cannot tell them apart. Their sizes can: seen from elevation e
(orthographic, any yaw), a cube of side a shows its top as a parallelogram whose columns spread a²/12 (its two
edges' horizontal extents square-sum to a²) over an area a²·sin e, and its vertical faces (a − sink)·cos e rows
tall down to where they meet the top face, so sink / a = 1 − (that height / cos e) / a. The cube's own top gives
both its side and the elevation it is seen from: the elevation read from the block beside it is the camera's ray
to the block, which under perspective is not the ray to the cube (version 9 read its sink a fifth to a third of a
half-side low with it).
"""
from __future__ import annotations

import numpy as np

from .psc_rest import Seat

ELEVATION = np.radians((5.0, 80.0))   # the elevation the cube's top is read at, clipped into this band


def cube_sink(solid: np.ndarray, depth: np.ndarray, fitted: Seat) -> float | None:
    """How deep SOLID, read as a cube, is sunk into the face it sits on seen from above, in half-sides (a ball's
    reading is in radii): 0 resting, 1 sunk half its height. None for a round outline (FITTED's circle: a ball,
    sink_depth), under 3 columns, or when SOLID does not sit on the face's top (FITTED's top_plane). Each of SOLID's columns is split at its nearest pixel
    (the crease between the cube's top and its front, which is nearest the camera seen from above): the rows above
    it are top, those below vertical. The top's area is their sum (half the crease row each way), its side the
    square root of 12 times the columns' variance weighted by those rows (plus a pixel's own 1/12), the vertical
    height the median over the central half of the columns."""
    cols = np.flatnonzero(solid.any(0))
    if cols.size < 3 or fitted.circle is not None or fitted.top is None:
        return None
    inside = solid[:, cols]
    first = np.argmax(inside, axis=0)
    last = solid.shape[0] - 1 - np.argmax(inside[::-1], axis=0)
    crease = np.argmax(np.where(inside, depth[:, cols], -np.inf), axis=0)
    top = crease - first + 0.5
    area = float(top.sum())
    centre = float((cols * top).sum()) / area
    side = float(np.sqrt(12.0 * float(((cols - centre) ** 2 * top).sum()) / area + 1.0))
    elevation = float(np.clip(np.arcsin(min(1.0, area / side ** 2)), *ELEVATION))
    quarter = cols.size // 4
    height = float(np.median((last - crease + 0.5)[quarter:cols.size - quarter]))
    return float(2.0 * (1.0 - height / np.cos(elevation) / side))
