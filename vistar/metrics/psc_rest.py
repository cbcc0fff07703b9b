"""What a solid rests on, seen from above: PSC's reading of a contact in view on a top face.

Seen from above, a solid resting on a horizontal face touches it out of sight, beneath itself: its lower rim is
raised above the face, which continues behind it. A solid sunk into the face meets it along an intersection curve
in view, where its surface rises out of the face's plane. The face's inverse depth is affine in the image (a
plane), so a fit to the face around the solid, extrapolated under the solid's lower rim, says how high that rim
stands above the face. Masks and depth are both unsure at the boundary (a depth network blurs it, a mask is off
by a pixel or two): the fit leaves out the face within MARGIN of the solid, and the rim is read MARGIN to
MARGIN + STRIP pixels inside the solid, where a resting solid stands higher above the face than a sunk one.
"""
from __future__ import annotations

import numpy as np
from scipy import ndimage

_SQUARE = np.ones((3, 3), bool)
MIN_SHARE = 0.5   # the solid sits on the face: at least this share of its columns has the face just beneath


def face_plane(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int, width: int) -> np.ndarray | None:
    """(a, b, c) of depth ≈ a·column + b·row + c over FACE pixels MARGIN+1 to MARGIN+WIDTH pixels from SOLID
    (Chebyshev), refitted without the pixels off the fit by more than 3× the median (another face of the same
    object). None with fewer than 6 such pixels."""
    near = ndimage.binary_dilation(solid, _SQUARE, iterations=margin)
    ring = ndimage.binary_dilation(near, _SQUARE, iterations=width) & ~near & face
    if ring.sum() < 6:
        return None
    rows, cols = np.nonzero(ring)
    design = np.stack([cols, rows, np.ones_like(rows)], 1).astype(np.float64)
    values = depth[rows, cols]
    keep = np.ones(len(values), bool)
    for _ in range(3):
        coef = np.linalg.lstsq(design[keep], values[keep], rcond=None)[0]
        off = np.abs(design @ coef - values)
        keep = off <= max(3 * float(np.median(off)), 1e-12)
    return np.asarray(coef, np.float64)


def rim_height(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int, strip: int) -> float | None:
    """Median inverse depth of SOLID's lower rim above FACE's plane under it (> 0: nearer than the face), read
    MARGIN to MARGIN + STRIP rows above the boundary in the central half of the columns where FACE lies just
    below SOLID. None when SOLID does not sit on a face seen from above: FACE beneath fewer than MIN_SHARE of its
    columns, too little face to fit, or a face whose inverse depth does not grow toward the image bottom (a
    wall, not something to rest on)."""
    cols = np.flatnonzero(solid.any(0))
    if cols.size == 0:
        return None
    height = solid.shape[0]
    lowest = height - 1 - np.argmax(solid[::-1, cols], axis=0)
    window = lowest[None, :] + np.arange(1, margin + strip + 2)[:, None]
    inside = window < height
    below = np.zeros(window.shape, bool)
    below[inside] = face[window[inside], np.broadcast_to(cols, window.shape)[inside]]
    on_face = np.flatnonzero(below.any(0))
    if on_face.size == 0 or on_face.size < MIN_SHARE * cols.size:
        return None
    plane = face_plane(solid, face, depth, margin, strip + 1)
    if plane is None or plane[1] <= 0:
        return None
    quarter = on_face.size // 4
    on_face = on_face[quarter:on_face.size - quarter]
    boundary = lowest[on_face] + 0.5 * (1 + np.argmax(below[:, on_face], axis=0))   # between the two masks' edges
    heights = []
    for col, edge in zip(cols[on_face], boundary):
        rows = np.arange(int(np.ceil(edge - margin - strip)), int(np.floor(edge - margin)) + 1)
        rows = rows[(rows >= 0) & solid[np.clip(rows, 0, height - 1), col]]
        heights.append(depth[rows, col] - (plane[0] * col + plane[1] * rows + plane[2]))
    values = np.concatenate(heights) if heights else np.zeros(0)
    return float(np.median(values)) if values.size else None
