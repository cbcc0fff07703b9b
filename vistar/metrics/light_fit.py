"""The scene light fitted jointly to every object's shadow: analysis by synthesis.

Per-pair geometry (light_geometry.pair_direction) needs each object's own shadow and its tip. Where objects
stand in each other's shadows, the shadows merge, the split between objects is a guess and a neighbour cuts
the tip, so pairs scatter. Here each candidate light direction *predicts* every object's ground shadow from the
same solid models (an upright solid sweeps its footprint disc along the shadow direction for height·cot e; a
ball casts an ellipse), hides what the objects themselves cover, and is scored by how well the union matches
the detected shadow pixels near the objects (IoU). A shadow that falls on another object is hidden in the
prediction and in the detection alike, so it costs nothing; merged shadows need no split.

Coordinates are each object's locally orthographic ground frame (docs/metrics/li.md, Geometry): a ground step
(dx, dz) shows as (dx, dz·sin φ) pixels at the object's local pitch φ, heights and radii in the same pixels.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .light_geometry import SolidModel


def light_vector(azimuth: float, elevation: float) -> np.ndarray:
    """Unit vector towards the light from azimuth (0 = from the camera, +90° = from the right) and elevation, radians."""
    return np.array([np.sin(azimuth) * np.cos(elevation), np.sin(elevation), np.cos(azimuth) * np.cos(elevation)])


def predicted_shadow(models: list[SolidModel], azimuth: float, elevation: float, px: np.ndarray,
                     py: np.ndarray) -> np.ndarray:
    """Which of the points (PX, PY) (image pixels) lie in some object's predicted ground shadow."""
    return _predicted(models, _ground(models, px, py), azimuth, elevation)


def _ground(models: list[SolidModel], px: np.ndarray, py: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The points in each object's ground frame (x, z relative to its base): fixed for the whole search."""
    return [(px - m.base[0], (py - m.base[1]) / m.sin_pitch) for m in models]


def _predicted(models: list[SolidModel], ground: list[tuple[np.ndarray, np.ndarray]], azimuth: float,
               elevation: float) -> np.ndarray:
    away = -np.array([np.sin(azimuth), np.cos(azimuth)])        # ground direction the shadows run (x, z)
    cot = np.cos(elevation) / max(np.sin(elevation), 1e-3)
    inside = np.zeros(ground[0][0].shape if ground else 0, bool)
    for m, (gx, gz) in zip(models, ground):
        along = gx * away[0] + gz * away[1]
        across = gx * away[1] - gz * away[0]
        if m.round:
            centre, semi = m.radius * cot, m.radius / max(np.sin(elevation), 1e-3)
            inside |= ((along - centre) / semi) ** 2 + (across / m.radius) ** 2 <= 1.0
        else:
            t = np.minimum(np.maximum(along, 0.0), m.height * cot)
            inside |= (along - t) ** 2 + across ** 2 <= m.radius ** 2
    return inside


@dataclass(frozen=True)
class FitResult:
    vector: np.ndarray        # best light direction
    iou: float                # its agreement with the detected shadow
    runner_up_deg: float      # spread of the near-best directions (IoU within 0.02 of the best), degrees


def fit_region(observed: np.ndarray, hidden: np.ndarray, margin: float = 0.25) -> np.ndarray:
    """Where predictions are compared: the box around the objects and their shadows, grown by MARGIN of its
    size on each side, so a predicted shadow that runs past every detected one still costs, while shadows
    of things far away (not in the instances) are not read."""
    ys, xs = np.nonzero(observed | hidden)
    region = np.zeros(observed.shape, bool)
    if len(ys):
        my, mx = margin * (ys.max() - ys.min() + 1), margin * (xs.max() - xs.min() + 1)
        region[max(0, int(ys.min() - my)):int(ys.max() + my) + 1, max(0, int(xs.min() - mx)):int(xs.max() + mx) + 1] = True
    return region


def fit_light(models: list[SolidModel], observed: np.ndarray, hidden: np.ndarray,
              max_side: int = 128) -> FitResult | None:
    """The light direction whose predicted shadows best match OBSERVED (bool HxW) over fit_region minus HIDDEN
    (object pixels: nothing there is seen as ground), on a grid thinned so the region's longest side has at
    most about MAX_SIDE points. Grid search (10° steps), then refinement around the best (3°, then 1°)."""
    if not models or not observed.any():
        return None
    region = fit_region(observed, hidden)
    rows, cols = np.nonzero(region)
    stride = max(1, int(np.ceil(max(np.ptp(rows), np.ptp(cols)) / max_side)))
    ys, xs = np.nonzero(region[::stride, ::stride] & ~hidden[::stride, ::stride])
    if len(xs) == 0:
        return None
    px, py = xs * stride + 0.5, ys * stride + 0.5
    obs = observed[ys * stride, xs * stride]
    if not obs.any():                          # every shadow pixel lies under an object: nothing to compare
        return None
    ground = _ground(models, px, py)

    def score(az: float, el: float) -> float:
        pred = _predicted(models, ground, az, el)
        union = int((pred | obs).sum())
        return float((pred & obs).sum()) / union if union else 0.0

    best = (-1.0, 0.0, 0.0)
    seen: list[tuple[float, float, float]] = []
    for az in np.radians(np.arange(-180, 180, 10.0)):
        for el in np.radians(np.arange(5, 90, 10.0)):
            s = score(az, el)
            seen.append((s, az, el))
            best = max(best, (s, az, el))
    for step in (np.radians(3.0), np.radians(1.0)):
        _, a0, e0 = best
        for da in (-3, -2, -1, 0, 1, 2, 3):
            for de in (-3, -2, -1, 0, 1, 2, 3):
                el = float(np.clip(e0 + de * step, np.radians(2), np.radians(88)))
                s = score(a0 + da * step, el)
                seen.append((s, a0 + da * step, el))
                best = max(best, (s, a0 + da * step, el))
    iou, az, el = best
    v = light_vector(az, el)
    near = [light_vector(a, e) for s, a, e in seen if s >= iou - 0.02]
    spread = max(float(np.degrees(np.arccos(np.clip(n @ v, -1, 1)))) for n in near)
    return FitResult(v, iou, spread)
