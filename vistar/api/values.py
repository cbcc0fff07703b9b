"""Scene values the `instances`, `shadows` and `padim` stages give LI, PSC and GC (so metrics can be tested with
hand-made values)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Instances:
    """Instance segmentation of one image (output of the `instances` stage)."""

    masks: np.ndarray         # (N, H, W) bool, at image resolution
    class_ids: np.ndarray     # (N,) int
    class_names: tuple[str, ...]  # (N,) label of each instance
    confidences: np.ndarray   # (N,) float in [0, 1]
    boxes: np.ndarray         # (N, 4) float x0, y0, x1, y1 in pixels

    def __len__(self) -> int:
        return len(self.class_ids)

    @classmethod
    def empty(cls, height: int, width: int) -> "Instances":
        return cls(np.zeros((0, height, width), bool), np.zeros(0, int), (), np.zeros(0), np.zeros((0, 4)))


def mask_box(mask: np.ndarray) -> tuple[float, float, float, float]:
    """The tight `Instances.boxes` row (x0, y0, x1, y1; x1/y1 one past the last pixel) of a mask, all zeros
    when it is empty; synthetic scenes derive their boxes from their exact masks with it."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return (0.0, 0.0, 0.0, 0.0)
    return (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


@dataclass(frozen=True)
class ShadowMap:
    mask: np.ndarray      # HxW bool, at image resolution
    source: str           # which segmenter produced it


@dataclass(frozen=True)
class PadimResult:
    score: float        # max Mahalanobis distance over grid positions
    s_ref: float        # the same statistic's median on the reference images
    stats_hash: str
