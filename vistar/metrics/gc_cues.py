"""Six image/depth cues of GC (duplicated structure is `gc_copy`, PaDiM the `padim` feature). Each returns a raw value
(larger = worse) and details; `to_score` maps a value to [0, 1] as exp(−value / scale), with the scales in
the ontology (`metrics.GC.params`) so calibration can fit them. Inputs are at work resolution.
"""
from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from ..kernels.depth_geometry import mean_abs_laplacian_ref, normal_dispersion_ref
from ..kernels.lbp import lbp_tile_histograms


def to_score(value: float, scale: float) -> float:
    return float(math.exp(-max(0.0, value) / max(scale, 1e-12)))


def normalise_depth(depth: np.ndarray) -> np.ndarray:
    """Relative depth is affine-invariant: map its 2nd–98th percentile range to [0, 1] (flat map → zeros)."""
    depth = np.where(np.isfinite(depth), depth, np.nan).astype(np.float64)
    lo, hi = np.nanpercentile(depth, [2, 98]) if np.isfinite(depth).any() else (0.0, 0.0)
    out = (depth - lo) / (hi - lo) if hi > lo else np.zeros_like(depth)
    return np.nan_to_num(out, nan=0.0)


def normal_dispersion(depth_n: np.ndarray, window: int) -> tuple[float, dict[str, Any]]:
    """Mean angle (radians) between each surface normal and the mean normal of its window: 0 on any plane
    (definition and accelerated versions: `vistar.kernels.depth_geometry`)."""
    value = normal_dispersion_ref(depth_n, window)
    return value, {"mean_angle_rad": round(value, 6)}


def depth_curvature(depth_n: np.ndarray) -> tuple[float, dict[str, Any]]:
    """Mean |5-point Laplacian| of range-normalised depth over interior pixels: 0 on any plane."""
    value = mean_abs_laplacian_ref(depth_n)
    return value, {"mean_abs_laplacian": round(value, 6)}


def highlight_breaks(image: np.ndarray, value_min: float, saturation_max: float, gap_px: int) -> tuple[float, dict[str, Any]]:
    """Specular highlights (bright, unsaturated) that a closing of GAP_PX would join are one highlight broken
    apart; value = extra fragments per highlight. No highlight → 0 (nothing to judge)."""
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
    mask = ((hsv[..., 2] >= value_min * 255) & (hsv[..., 1] <= saturation_max * 255)).astype(np.uint8)
    n_raw = _components(mask, min_area=2)
    if n_raw == 0:
        return 0.0, {"highlights": 0, "fragments": 0}
    kernel = np.ones((2 * gap_px + 1, 2 * gap_px + 1), np.uint8)
    closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
    n_closed = max(1, _components(closed, min_area=2))
    value = max(0, n_raw - n_closed) / n_closed
    return float(value), {"highlights": n_closed, "fragments": n_raw}


def _components(mask: np.ndarray, min_area: int) -> int:
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    return int((stats[1:, cv2.CC_STAT_AREA] >= min_area).sum()) if n > 1 else 0


def contour_fragmentation(image: np.ndarray, low: float, high: float, min_frac: float) -> tuple[float, dict[str, Any]]:
    """Share of Canny edge pixels in components shorter than MIN_FRAC of the diagonal: broken contours
    fall apart into short pieces. No edges → 0."""
    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    edges = cv2.Canny(gray, low, high, L2gradient=True)
    n, _, stats, _ = cv2.connectedComponentsWithStats((edges > 0).astype(np.uint8), connectivity=8)
    sizes = stats[1:, cv2.CC_STAT_AREA]
    total = int(sizes.sum())
    if total == 0:
        return 0.0, {"edge_px": 0, "segments": 0}
    min_len = min_frac * math.hypot(*gray.shape)
    short = int(sizes[sizes < min_len].sum())
    return short / total, {"edge_px": total, "segments": int(n - 1), "short_px": short}


def lbp_irregularity(image: np.ndarray, tiles: int) -> tuple[float, dict[str, Any]]:
    """Mean Jensen–Shannon divergence (bits) between each tile's uniform-LBP (P=8, R=1) histogram and the
    whole image's (LBP codes and tile histograms: `vistar.kernels.lbp`): a regular texture looks the same
    everywhere (≈ 0)."""
    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    _, hist = lbp_tile_histograms(gray, tiles)
    hist = np.asarray(hist, float)
    whole = hist.sum(0)
    if whole.sum() == 0:
        return 0.0, {"mean_js_bits": 0.0}
    whole /= whole.sum()
    divergences = [_js(h / h.sum(), whole) for h in hist if h.sum() > 0]
    value = float(np.mean(divergences)) if divergences else 0.0
    return value, {"mean_js_bits": round(value, 6)}


def _js(p: np.ndarray, q: np.ndarray) -> float:
    m = (p + q) / 2

    def kl(a: np.ndarray, b: np.ndarray) -> float:
        nz = a > 0
        return float((a[nz] * np.log2(a[nz] / b[nz])).sum())

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def stretched_band(image: np.ndarray, band_frac: float) -> tuple[float, dict[str, Any]]:
    """A band resampled along one axis loses its fine detail along that axis only. For every band of BAND_FRAC of
    the side, across each axis in turn: log of (second-difference energy along the axis + 1) / (across it + 1)
    (grey levels², the 1 so that flat bands read 0); value = how far the lowest band falls below the image's
    median band, the larger of the two axes."""
    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float64)
    value, axis, where = 0.0, 0, 0
    for k, grid in enumerate((gray, gray.T)):
        if min(grid.shape) < 3:
            continue
        along = ((grid[2:, 1:-1] - 2 * grid[1:-1, 1:-1] + grid[:-2, 1:-1]) ** 2).mean(1)
        across = ((grid[1:-1, 2:] - 2 * grid[1:-1, 1:-1] + grid[1:-1, :-2]) ** 2).mean(1)
        width = min(len(along), max(3, int(band_frac * grid.shape[0])))
        box = np.ones(width) / width
        ratio = np.log((np.convolve(along, box, "valid") + 1) / (np.convolve(across, box, "valid") + 1))
        drop = float(np.median(ratio) - ratio.min())
        if drop > value:
            value, axis, where = drop, k, int(ratio.argmin()) + 1
    return value, {"log_drop": round(value, 6), "axis": axis, "band_start_px": where}
