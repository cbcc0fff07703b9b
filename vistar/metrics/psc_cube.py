"""A cube on a top face seen from above: how deep it is sunk, from its own faces' sizes in the image.

A resting cube's bottom edge lies on the face in view as a sunk cube's intersection line does, and both rise from
it as a vertical face, so depth at the contact cannot tell them apart. Their sizes can: seen from elevation e
(orthographic, any yaw), a cube of side a shows its top as an area a²·sin e and its vertical faces (a − sink)·cos e
rows tall down to where they meet the top face, so sink / a = 1 − (that height / cos e) / √(top area / sin e).
"""
from __future__ import annotations

import numpy as np

from .psc_rest import FACE_BAND, face_elevation, outline_circle, sides_elevation, top_plane


def cube_sink(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int, tolerance: float) -> float | None:
    """How deep SOLID, read as a cube, is sunk into FACE seen from above, in half-sides (a ball's reading is in
    radii): 0 resting, 1 sunk half its height. None for a round outline (a ball: sink_depth), under 3 columns,
    or when SOLID does not sit on FACE's top (top_plane). The elevation comes from FACE's vertical faces against its
    top (sides_elevation), else from its foreshortening clipped into FACE_BAND. Each of SOLID's columns is split at
    its nearest pixel (the crease between the cube's top and its front, which is nearest the camera seen from
    above): the rows above it are top, those below vertical; the top's area is their sum (half the crease row each
    way), the vertical height the median over the central half of the columns."""
    cols = np.flatnonzero(solid.any(0))
    if cols.size < 3 or outline_circle(solid) is not None:
        return None
    found = top_plane(solid, face, depth, margin)
    if found is None:
        return None
    plane, sides = found
    elevation = sides_elevation(sides, depth, plane)
    if elevation is None:
        seen = face_elevation(face, depth, plane, tolerance)
        if seen is None:
            return None
        elevation = float(np.clip(seen, *FACE_BAND))
    inside = solid[:, cols]
    first = np.argmax(inside, axis=0)
    last = solid.shape[0] - 1 - np.argmax(inside[::-1], axis=0)
    crease = np.argmax(np.where(inside, depth[:, cols], -np.inf), axis=0)
    area = float((crease - first + 0.5).sum())
    quarter = cols.size // 4
    height = float(np.median((last - crease + 0.5)[quarter:cols.size - quarter]))
    side = np.sqrt(area / np.sin(elevation))
    return float(2.0 * (1.0 - height / np.cos(elevation) / side))
