"""What a solid stands on: PSC's reading of resting contact against a face.

A solid resting against a block's face stands on something below it (the ground, a table): the face's foot is
hidden behind it and whatever shows beneath its lowest pixel continues its depth. Its top edge may then meet the
face with no depth step (a cube's far top edge) and that is resting contact. A solid whose rim meets the face while
the face continues beneath it, level with or behind its lowest pixel, is held by the face: sunk into it (or fixed to
it, the attachment case). One with something clearly further away beneath it floats above that, and stands on
nothing either. Where the thing beneath is nearer it occludes the solid's bottom, which then says nothing.
"""
from __future__ import annotations

import numpy as np


def support_below(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, reach: int, step: float) -> float:
    """Fraction of SOLID's image columns that do not hang, looking REACH rows down from the solid's lowest pixel.

    A column hangs when a FACE pixel lies in that window and is not nearer than the lowest pixel by more than STEP
    (inverse depth, larger = nearer), or when no FACE pixel does and the pixel REACH rows down is more than STEP
    further away.
    Columns whose window leaves the image do not hang (the solid continues out of view), nor do those whose
    depth there is unknown (NaN: no evidence either way). No pixels: 0."""
    cols = np.flatnonzero(solid.any(0))
    if cols.size == 0:
        return 0.0
    height = solid.shape[0]
    lowest = height - 1 - np.argmax(solid[::-1, cols], axis=0)
    rows = lowest[None, :] + np.arange(1, reach + 1)[:, None]              # reach x columns look-down window
    inside = rows < height
    beneath = np.zeros(rows.shape, bool)
    beneath[inside] = face[rows[inside], np.broadcast_to(cols, rows.shape)[inside]]
    on_face = beneath.any(0)
    first = np.minimum(rows[np.argmax(beneath, axis=0), np.arange(cols.size)], height - 1)
    face_step = depth[first, cols] - depth[lowest, cols]                        # > 0: the face is nearer
    far_step = depth[np.minimum(lowest + reach, height - 1), cols] - depth[lowest, cols]
    hanging = np.where(on_face, face_step <= step, (far_step < -step) & (lowest + reach < height))
    return float(1.0 - hanging.mean())
