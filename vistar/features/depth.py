"""`depth` stage: relative inverse depth (MiDaS convention: LARGER = NEARER), HxW float32 at image resolution.

The values are affine-invariant (unknown scale and shift per image), so consumers use only differences and
ratios of differences (PSC's chaos ratio) or range-normalise first (GC's normal and curvature cues).
Default model: DPT-hybrid MiDaS via transformers; any checkpoint loadable by `DPTForDepthEstimation` works
with `--model-path dpt-hybrid-midas=DIR`. Input: RGB resized to the model's square `image_size` (bicubic,
antialiased, on the run's device), normalised with mean = std = 0.5 (MiDaS's DPT normalisation). MiDaS's own pipeline keeps the
aspect ratio; a square input lets images of any shape share a batch and fits the hybrid's position grid.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ..api import FeatureStage, StageContext, StageInput
from ..models import load_model
from ..runtime.device import Precision, autocast, batch_invariant, images_to_tensor, setup_torch


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
        out = []
        for im, p in zip(images, pred.float().cpu()):
            full = F.interpolate(p[None, None], size=im.shape[:2], mode="bilinear", align_corners=False)[0, 0]
            out.append(full.numpy().astype(np.float32))
        return out


def load_depth_model(name: str, ctx: StageContext) -> DptDepth:
    setup_torch(ctx)
    return load_model(name, ctx, lambda path: DptDepth(path, ctx.device),
                      lambda model, _: DptDepth(None, ctx.device, model))


@dataclass(frozen=True)
class DepthParams:
    """`features.depth`."""

    model: str = "dpt-hybrid-midas"
    batch_size: int = 4
    precision: Precision = "fp32"      # autocast: fp32 | bf16 | fp16


def _compute(batch: list[StageInput], ctx: StageContext) -> list[np.ndarray]:
    params = ctx.params("depth", DepthParams)
    model = ctx.model(f"depth:{params.model}", lambda: load_depth_model(params.model, ctx))
    size = max(1, params.batch_size)
    out: list[np.ndarray] = []
    for i in range(0, len(batch), size):
        out += model([item.image for item in batch[i:i + size]], autocast(ctx.device, params.precision))
    return out


STAGE = FeatureStage(name="depth", version="dpt/1", compute=_compute, models=("dpt-hybrid-midas",), params=DepthParams)
