"""Camera pitch for LI, measured in the image instead of assumed (docs/metrics/li.md, "Camera pitch").

A shadow's ground length is read through the pitch φ (a ground step dz shows as dz·sin φ pixels), so a wrong
pitch skews the light's elevation most for low cameras, which are also the ones that see the horizon: a level
camera's horizon is a straight horizontal edge across the free width of the image, f·tan φ above the principal
point, so φ = atan((c_y − y_h) / f). Without a horizon the camera looks down steeply enough to see only ground,
and the assumed `camera_pitch_deg` is used, recorded as the source.

The focal length f comes from `camera_fov_deg` (vertical field of view): single images carry no reliable cue
for it, so it is an assumption, also recorded. Each object is then read at its own local pitch,
φ + atan((y_base − c_y) / f): objects low in a wide-angle image are seen from more steeply above.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .li_params import LIParams


@dataclass(frozen=True)
class CameraPitch:
    pitch_deg: float       # downward pitch of the optical axis
    focal_px: float        # assumed focal length, pixels (from camera_fov_deg)
    centre_row: float      # principal point row (image centre)
    source: str            # "horizon" | "assumed"

    def local(self, row: float) -> float:
        """Pitch of the ray through image ROW: where an object standing there is seen from."""
        return self.pitch_deg + math.degrees(math.atan((row - self.centre_row) / self.focal_px))

    def record(self) -> dict[str, Any]:
        return {"pitch_deg": round(self.pitch_deg, 1), "source": self.source,
                "assumed_vertical_fov_deg": round(math.degrees(2 * math.atan(self.centre_row / self.focal_px)), 1)}


def horizon_row(image: np.ndarray, objects: np.ndarray, min_cols: float = 0.7, min_step: float = 0.08) -> float | None:
    """Row of a horizontal edge crossing at least MIN_COLS of the object-free columns (colour step over two
    rows, summed over RGB in [0, 1], above MIN_STEP), or None. A row with less than 30 % of the width free
    of objects cannot show a horizon."""
    if image.ndim != 3 or image.shape[0] < 4:
        return None
    img = image[..., :3].astype(np.float32) / 255.0
    step = np.abs(img[2:] - img[:-2]).sum(-1)
    free = ~(objects[2:] | objects[1:-1] | objects[:-2])
    n_free = free.sum(1)
    frac = ((step > min_step) & free).sum(1) / np.maximum(n_free, 1)
    frac[n_free < 0.3 * image.shape[1]] = 0.0
    row = int(np.argmax(frac))
    return None if frac[row] < min_cols else row + 1.5      # the edge between rows row+1 and row+2


def _resampled(masks: list[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    """The objects' union at SHAPE (nearest neighbour): the image may be a thumbnail of the masks' grid."""
    if not masks:
        return np.zeros(shape, bool)
    union = np.any(masks, axis=0)
    rows = ((np.arange(shape[0]) + 0.5) * union.shape[0] / shape[0]).astype(int)
    cols = ((np.arange(shape[1]) + 0.5) * union.shape[1] / shape[1]).astype(int)
    return np.asarray(union[np.ix_(rows, cols)], bool)


def estimate_pitch(image: np.ndarray | None, masks: list[np.ndarray], height: int, params: LIParams) -> CameraPitch:
    """From the horizon in IMAGE (any resolution; MASKS, the objects, are left out of the search) unless
    `use_horizon` is false, else the assumed pitch. HEIGHT: rows of the grid the masks and shadows live on."""
    centre = 0.5 * height
    focal = centre / math.tan(math.radians(float(params.camera_fov_deg) / 2))
    if image is not None and params.use_horizon:
        row = horizon_row(image, _resampled(masks, image.shape[:2]))
        if row is not None:
            row *= height / image.shape[0]
            return CameraPitch(math.degrees(math.atan((centre - row) / focal)), focal, centre, "horizon")
    return CameraPitch(float(params.camera_pitch_deg), focal, centre, "assumed")
