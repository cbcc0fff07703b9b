"""GC — geometric consistency: the weakest of eight cues, each in [0, 1] (docs/metrics/gc.md).

Depth cues (on range-normalised relative depth): (1) local angular dispersion of surface normals,
(2) depth curvature (mean |Laplacian|). Image cues: (3) highlight continuity, (4) contour integrity,
(5) LBP texture regularity, (6) duplicated structure (copy-move), (7) stretched bands. Feature-level:
(8) PaDiM anomaly against user-fitted reference statistics (absent when none are configured). Every cue's
raw value and score is in the details, with the one that set the minimum, so users see which defect drove GC.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from ..api import Metric, MetricResult, PadimResult
from . import gc_cues as cues
from .gc_copy import copy_move


@dataclass(frozen=True)
class GCParams:
    """`metrics.GC.params`: each cue's settings and the scale its raw value is mapped to [0, 1] with."""

    normal_window: int
    normal_scale: float
    curvature_scale: float
    highlight_value: float
    highlight_saturation: float
    highlight_gap_px: int
    highlight_scale: float
    canny_low: float
    canny_high: float
    contour_min_frac: float
    contour_scale: float
    lbp_tiles: int
    lbp_scale: float
    copy_block: int
    copy_blur: float
    copy_min_residual: float
    copy_max_coherence: float
    copy_min_corr: float
    copy_margin: float
    copy_min_pairs: int
    copy_scale: float
    band_frac: float
    band_scale: float
    padim_tolerance: float


def cue_scores(small: np.ndarray, depth: np.ndarray, padim: PadimResult | None, params: GCParams) -> dict[str, dict[str, Any]]:
    """Every available cue's score, raw value and details; SMALL is the thumbnail, DEPTH any resolution."""
    h, w = small.shape[:2]
    depth = np.asarray(depth, np.float32)
    if depth.shape != (h, w):
        shrink = depth.shape[0] > h
        depth = cv2.resize(np.nan_to_num(depth), (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
    depth_n = cues.normalise_depth(depth)
    raw = {
        "normals": (cues.normal_dispersion(depth_n, int(params.normal_window)), params.normal_scale),
        "curvature": (cues.depth_curvature(depth_n), params.curvature_scale),
        "highlights": (cues.highlight_breaks(small, params.highlight_value, params.highlight_saturation,
                                             int(params.highlight_gap_px)), params.highlight_scale),
        "contours": (cues.contour_fragmentation(small, params.canny_low, params.canny_high,
                                                params.contour_min_frac), params.contour_scale),
        "texture": (cues.lbp_irregularity(small, int(params.lbp_tiles)), params.lbp_scale),
        "copies": (copy_move(small, int(params.copy_block), params.copy_blur, params.copy_min_residual,
                             params.copy_max_coherence, params.copy_min_corr, params.copy_margin,
                             int(params.copy_min_pairs)), params.copy_scale),
        "stretch": (cues.stretched_band(small, params.band_frac), params.band_scale),
    }
    out = {name: {"score": round(cues.to_score(value, scale), 6), "value": round(value, 6), **details}
           for name, ((value, details), scale) in raw.items()}
    if padim is not None:
        excess = max(0.0, padim.score / max(padim.s_ref, 1e-12) - 1.0)
        out["padim"] = {"score": round(math.exp(-excess / params.padim_tolerance), 6), "value": round(padim.score, 6),
                        "s_ref": round(padim.s_ref, 6), "stats_hash": padim.stats_hash}
    return out


def _gc(features: dict[str, Any], controls: dict[str, Any], params: GCParams, prompt: Any) -> MetricResult:
    scores = cue_scores(features["thumbnail"], features["depth"], features["padim"], params)
    worst = min(scores, key=lambda name: (scores[name]["score"], name))
    return MetricResult.ok(scores[worst]["score"], cues=scores, weakest=worst, n_cues=len(scores))


METRIC = Metric(name="GC", angle="GC", version="2", features=("thumbnail", "depth", "padim"), fn=_gc, params=GCParams)
