"""`depth` stage: relative inverse depth (MiDaS convention: LARGER = NEARER), HxW float32 at image resolution.

The values are affine-invariant (unknown scale and shift per image), so consumers use only differences and
ratios of differences (PSC's chaos ratio) or range-normalise first (GC's normal and curvature cues).
Default model: DPT-hybrid MiDaS via transformers; any checkpoint loadable by `DPTForDepthEstimation` works
with `--model-path dpt-hybrid-midas=DIR`. Input: RGB resized to the model's square `image_size` (bicubic,
antialiased, as uint8 on the run's device, as DPT's torchvision-backed processor resizes; 10x faster on a CPU than
dpt/1's float resize, whose inputs it matches to about 1 grey level on smooth scenes and 4 on photos), normalised
with mean = std = 0.5 (MiDaS's normalisation). MiDaS's own pipeline keeps the
aspect ratio; a square input lets images of any shape share a batch and fits the hybrid's position grid.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ..api import FeatureStage, StageContext, StageInput
from ..models import load_model
from ..runtime import precision
from ..runtime.device import batch_invariant, images_to_tensor, setup_torch
from ..runtime.precision import Precision


class DptDepth:
    """A DPT depth model loaded from a local folder; deterministic eval-mode inference."""

    def __init__(self, path, device: str = "cpu", model=None):
        """`model`: an already built DPTForDepthEstimation (a random-initialised one for benchmarks) instead of PATH."""
        import torch
        from transformers import DPTForDepthEstimation

        self.torch = torch
        self.device = device
        self.model = (model if model is not None else DPTForDepthEstimation.from_pretrained(str(path))).to(device).eval()
        size = self.model.config.image_size
        self.size = tuple(size) if isinstance(size, (list, tuple)) else (size, size)

    def __call__(self, images: list[np.ndarray], cast=None) -> list[np.ndarray]:
        """`cast`: an autocast context for the forward pass only (post-processing stays fp32)."""
        torch = self.torch
        F = torch.nn.functional
        batch = images_to_tensor(images, self.size, mean=(0.5,) * 3, std=(0.5,) * 3, device=self.device)
        with torch.inference_mode(), cast or contextlib.nullcontext():
            pred = batch_invariant(lambda pixel_values: self.model(pixel_values=pixel_values).predicted_depth,
                                   self.device, pixel_values=batch)
        if self.device == "cpu":   # OpenCV's bilinear: the same half-pixel mapping within 2e-7, 4x torch's speed
            import cv2

            return [cv2.resize(p.numpy(), im.shape[1::-1], interpolation=cv2.INTER_LINEAR)
                    for im, p in zip(images, pred.float())]
        return [F.interpolate(p[None, None], size=im.shape[:2], mode="bilinear", align_corners=False)[0, 0].cpu().numpy()
                for im, p in zip(images, pred.float())]


def load_depth_model(name: str, ctx: StageContext) -> DptDepth:
    setup_torch(ctx)
    return load_model(name, ctx, lambda path: DptDepth(path, ctx.device),
                      lambda model, _: DptDepth(None, ctx.device, model))


@dataclass(frozen=True)
class DepthParams:
    """`features.depth`."""

    model: str = "dpt-hybrid-midas"
    batch_size: int = 4
    precision: Precision = "auto"      # the forward pass's arithmetic (runtime/precision.py)


def _compute(batch: list[StageInput], ctx: StageContext) -> list[np.ndarray]:
    params = ctx.params("depth", DepthParams)
    model = ctx.model(f"depth:{params.model}", lambda: load_depth_model(params.model, ctx))
    size = max(1, params.batch_size)
    out: list[np.ndarray] = []
    for i in range(0, len(batch), size):
        out += model([item.image for item in batch[i:i + size]], precision.compute(ctx, "depth", params.precision))
    return out


def _model_modules(ctx: StageContext) -> list:
    return [ctx.cache[f"depth:{ctx.params('depth', DepthParams).model}"].model]


STAGE = FeatureStage(name="depth", version="dpt/2", compute=_compute, models=("dpt-hybrid-midas",), params=DepthParams,
                     model_modules=_model_modules)
