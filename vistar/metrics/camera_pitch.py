"""Camera pitch for LI, measured in the image instead of assumed (docs/metrics/li.md, "Camera pitch").

A shadow's ground length is read through the pitch φ (a ground step dz shows as dz·sin φ pixels), so a wrong
pitch skews the light's elevation most for low cameras. Two cues, in order of trust, then the fallback:

1. **Horizon** (a level camera): the ground ends at a straight horizontal edge spanning the free width of the
   image, at f·tan φ above the principal point; φ = atan((c_y − y_h) / f).
2. **Object tops**: the top of an upright solid (a cylinder's cap, a box's roof) is a horizontal circle or
   rectangle seen at the local pitch: its outline is a half-ellipse of half-height a·sin φ_local, a = half the
   silhouette width. Fitted per object (least squares on the per-column top edge), moved to the principal
   point (φ = φ_local − atan((y_top − c_y) / f)), and the median over objects taken.
3. The assumed `camera_pitch_deg`, recorded as the source.

The focal length f comes from `camera_fov_deg` (vertical field of view): single images carry no reliable cue
for it, so it is an assumption, also recorded. Each object is then read at its own local pitch,
φ + atan((y_base − c_y) / f): objects low in a wide-angle image are seen from more steeply above.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CameraPitch:
    pitch_deg: float       # downward pitch of the optical axis
    focal_px: float        # assumed focal length, pixels (from camera_fov_deg)
    centre_row: float      # principal point row (image centre)
    source: str            # "horizon" | "object tops" | "assumed"

    def local(self, row: float) -> float:
        """Pitch of the ray through image ROW: where an object standing there is seen from."""
        return self.pitch_deg + math.degrees(math.atan((row - self.centre_row) / self.focal_px))

    def record(self) -> dict:
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


ROOF_MARGIN = 0.6


def top_cap_pitch(mask: np.ndarray, max_residual_px: float = 2.0, min_half_width_px: float = 6.0) -> float | None:
    """Local pitch (degrees) at the top of an upright solid from its top outline, or None when the object is
    too small, touches the border, or neither outline model fits (residual too large). Two models, the
    roof wins only when it fits clearly better (residual below ROOF_MARGIN of the ellipse's: with a free corner
and two slopes it follows a small ellipse's pixel steps as well): a round top (cylinder) is a half-ellipse of half-height a·sin φ; a rectangular top (box)
    is a roof of two straight edges meeting at the far corner, and since the corner is a right angle on the
    ground, sin² φ = k_left·k_right (the two edges' slopes in rows per column). The outermost 15 % of
    columns on each side are left out: perspective tilts the sides there."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    h, w = mask.shape
    x0, x1 = xs.min(), xs.max() + 1
    half = 0.5 * (x1 - x0)
    if x0 <= 1 or ys.min() <= 1 or x1 >= w - 1 or half < min_half_width_px:
        return None
    top = np.full(x1 - x0, np.inf)
    np.minimum.at(top, xs - x0, ys.astype(float))
    u = (np.arange(x0, x1) + 0.5 - 0.5 * (x0 + x1)) / half
    keep = np.abs(u) <= 0.85
    ellipse, roof = _ellipse_top(u[keep], top[keep], half), _roof_top(u[keep] * half, top[keep])
    if roof is not None and roof[0] < ROOF_MARGIN * ellipse[0]:
        ellipse = roof
    residual, sin_p = ellipse
    return math.degrees(math.asin(sin_p)) if residual <= max_residual_px and 0 < sin_p < 1 else None


def _ellipse_top(u: np.ndarray, top: np.ndarray, half: float) -> tuple[float, float]:
    """(rms residual, sin φ) of the half-ellipse top(u) = y_c − b·√(1 − u²)."""
    design = np.stack([np.ones_like(u), -np.sqrt(1 - u ** 2)], 1)
    coef, *_ = np.linalg.lstsq(design, top, rcond=None)
    return float(np.sqrt(np.mean((design @ coef - top) ** 2))), float(coef[1]) / half


def _roof_top(x: np.ndarray, top: np.ndarray) -> tuple[float, float] | None:
    """(rms residual, sin φ) of two lines meeting at the highest column (the far corner), or None when
    either side has fewer than 3 columns or slopes the wrong way."""
    apex = float(np.median(x[top == top.min()]))
    left, right = x < apex, x > apex
    if left.sum() < 3 or right.sum() < 3:
        return None
    residual, slopes = 0.0, []
    for side in (left, right):
        slope, icpt = np.polyfit(x[side], top[side], 1)
        residual += float(((slope * x[side] + icpt - top[side]) ** 2).sum())
        slopes.append(slope)
    if slopes[0] >= 0 or slopes[1] <= 0:
        return None
    return math.sqrt(residual / len(x)), math.sqrt(-slopes[0] * slopes[1])


def _resampled(masks: list[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    """The objects' union at SHAPE (nearest neighbour): the image may be a thumbnail of the masks' grid."""
    if not masks:
        return np.zeros(shape, bool)
    union = np.any(masks, axis=0)
    rows = ((np.arange(shape[0]) + 0.5) * union.shape[0] / shape[0]).astype(int)
    cols = ((np.arange(shape[1]) + 0.5) * union.shape[1] / shape[1]).astype(int)
    return union[np.ix_(rows, cols)]


def estimate_pitch(image: np.ndarray | None, masks: list[np.ndarray], height: int, params: dict) -> CameraPitch:
    """Horizon, else the median of the upright objects' tops (MASKS: the objects the silhouette test called
    upright), else the assumed pitch."""
    centre = 0.5 * height
    focal = centre / math.tan(math.radians(float(params["camera_fov_deg"]) / 2))
    if image is not None:
        row = horizon_row(image, _resampled(masks, image.shape[:2]))
        if row is not None:
            row *= height / image.shape[0]
            return CameraPitch(math.degrees(math.atan((centre - row) / focal)), focal, centre, "horizon")
    tops = []
    for mask in masks:
        local = top_cap_pitch(mask)
        if local is not None:
            tops.append(local - math.degrees(math.atan((np.nonzero(mask)[0].min() - centre) / focal)))
    if tops:
        return CameraPitch(float(np.median(tops)), focal, centre, "object tops")
    return CameraPitch(float(params["camera_pitch_deg"]), focal, centre, "assumed")
