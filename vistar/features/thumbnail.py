"""`thumbnail` stage: the image shrunk to a fixed longest side (area interpolation, never enlarged), for
metrics that read pixels directly (GC's highlight, contour and texture cues) at a resolution-independent scale."""
from __future__ import annotations

import numpy as np

from ..engine.registry import FeatureStage, StageContext, StageInput
from ..metrics.gc_cues import resize_longest


def _compute(batch: list[StageInput], ctx: StageContext) -> list[np.ndarray]:
    side = int(ctx.params("thumbnail").get("side", 256))
    return [np.ascontiguousarray(resize_longest(item.image, side)) for item in batch]


STAGE = FeatureStage(name="thumbnail", version="1", compute=_compute)
