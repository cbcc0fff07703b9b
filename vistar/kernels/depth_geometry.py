"""Depth-map geometry for GC's depth cues: surface normals by finite differences, their local angular
dispersion, and the mean absolute Laplacian (curvature).

Definitions (GC calls these float64 numpy versions; one small map per image is a few vectorised passes):
- normals of the height field z = depth(x, y) with x, y in units of the longest side: central differences
  inside, one-sided at the border (`np.gradient`; no slope along a side one pixel long), n = (−∂z/∂x, −∂z/∂y, 1) / ‖·‖;
- dispersion = mean over interior pixels (WINDOW//2 + 1 from every border, unless the map is too small to
  have any) of the angle between each normal and the mean normal of its WINDOW×WINDOW box (mirror border
  with the edge pixel repeated), 0 on any plane;
- curvature = mean |5-point Laplacian| over pixels with four neighbours, 0 on any plane.
"""
from __future__ import annotations

import numpy as np
from scipy import ndimage


def surface_normals(depth: np.ndarray) -> np.ndarray:
    """(H, W) depth → (H, W, 3) unit normals, float64. Along an axis one pixel long there is no difference to
    take: the slope there is 0 (a 1-pixel-high thumbnail is flat across, not an error)."""
    depth = np.asarray(depth, np.float64) * max(np.shape(depth))
    gy, gx = (np.gradient(depth, axis=axis) if depth.shape[axis] > 1 else np.zeros_like(depth) for axis in (0, 1))
    inv = 1.0 / np.sqrt(gx * gx + gy * gy + 1.0)
    return np.stack([-gx * inv, -gy * inv, inv], -1)


def _interior(shape: tuple[int, int], margin: int) -> tuple[slice, slice]:
    if min(shape) > 2 * margin:
        return slice(margin, shape[0] - margin), slice(margin, shape[1] - margin)
    return slice(None), slice(None)


def normal_dispersion_ref(depth: np.ndarray, window: int) -> float:
    """Mean angle (radians) between each normal and its window's mean normal over the interior."""
    if window < 1:
        raise ValueError(f"normal window must be ≥ 1 pixel, got {window}")
    n = surface_normals(depth)
    mean = ndimage.uniform_filter(n, size=(window, window, 1), mode="reflect")
    length = np.sqrt(np.einsum("hwc,hwc->hw", mean, mean))
    cos = np.einsum("hwc,hwc->hw", n, mean) / np.maximum(length, 1e-12)
    angle = np.arccos(np.clip(cos, -1.0, 1.0))
    return float(angle[_interior(angle.shape, window // 2 + 1)].mean())


def mean_abs_laplacian_ref(depth: np.ndarray) -> float:
    """Mean |d(y−1,x) + d(y+1,x) + d(y,x−1) + d(y,x+1) − 4·d(y,x)| over interior pixels (0 if there are none)."""
    d = np.asarray(depth, np.float64)
    if min(d.shape) < 3:
        return 0.0
    lap = d[:-2, 1:-1] + d[2:, 1:-1] + d[1:-1, :-2] + d[1:-1, 2:] - 4 * d[1:-1, 1:-1]
    return float(np.abs(lap).mean())
