"""`thumbnail` stage: the image shrunk to a fixed longest side (area interpolation, never enlarged), for
metrics that read pixels directly (GC's highlight, contour and texture cues) at a resolution-independent scale."""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from ..api import FeatureStage, StageContext, StageInput


def resize_longest(array: np.ndarray, side: int, interpolation=cv2.INTER_AREA) -> np.ndarray:
    """Shrink so the longest side is SIDE (never enlarge), keeping the aspect ratio."""
    h, w = array.shape[:2]
    factor = side / max(h, w)
    if factor >= 1:
        return array
    return cv2.resize(array, (max(1, round(w * factor)), max(1, round(h * factor))), interpolation=interpolation)


@dataclass(frozen=True)
class ThumbnailParams:
    """`features.thumbnail`: the longest side of the image GC's pixel cues see."""

    side: int = 256


def _compute(batch: list[StageInput], ctx: StageContext) -> list[np.ndarray]:
    side = ctx.params("thumbnail", ThumbnailParams).side
    return [np.ascontiguousarray(resize_longest(item.image, side)) for item in batch]


STAGE = FeatureStage(name="thumbnail", version="1", compute=_compute, params=ThumbnailParams)
