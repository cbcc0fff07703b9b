"""Shadow feature stage: a per-pixel cast-shadow mask, from a classical detector or a learned segmenter.

VISTAR uses a small learned shadow segmenter whose weights are not public. The default here is classical
(`shadows_classical`; on a GPU the same steps run batched, `shadows_torch`). Setting `features.shadows.model`
to a catalogue name switches to a learned segmenter (a `torch.export` program, `*.pt2`, mapping a 1x3xHxW
float image in [0,1] to 1x1xHxW logits), loaded through the model layer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..api import FeatureStage, Instances, ShadowMap, StageContext, StageInput
from ..models import load_model
from .shadows_classical import ClassicalShadowDetector
from .shadows_torch import detect_batch


class ShadowSegmenter(Protocol):
    name: str

    def __call__(self, image: np.ndarray, instances: Instances) -> np.ndarray: ...   # HxW bool


class ExportedShadowSegmenter:
    """A learned segmenter from the model layer: an exported program (RGB in [0,1] -> shadow logits)."""

    def __init__(self, name: str, path, device: str = "cpu", threshold: float = 0.5):
        import torch

        self.name, self.device, self.threshold = name, device, threshold
        self.module = torch.export.load(str(program_file(name, path))).module().to(device)

    def __call__(self, image: np.ndarray, instances: Instances) -> np.ndarray:
        import torch

        x = torch.from_numpy(np.ascontiguousarray(image)).permute(2, 0, 1)[None].float().div(255).to(self.device)
        with torch.no_grad():
            logits = self.module(x)
        prob = torch.sigmoid(logits)[0, 0].cpu().numpy()
        objects = instances.masks.any(0) if len(instances) else np.zeros(prob.shape, bool)
        return (prob >= self.threshold) & ~objects


def program_file(name: str, path):
    """The exported program of weight NAME: PATH itself, or the first `*.pt2` in the folder PATH."""
    file = path if path.is_file() else next(iter(sorted(path.glob("*.pt2"))), None)
    if file is None:
        raise FileNotFoundError(f"{path}: no exported program (*.pt2) for shadow model '{name}'")
    return file


@dataclass(frozen=True)
class ShadowsParams:
    """`features.shadows`: the classical detector's settings (ClassicalShadowDetector), or a learned segmenter."""

    max_side: int = 512
    kernel_frac: float = 0.25
    max_ratio: float = 0.7
    max_chroma_shift: float = 0.08
    min_area_frac: float = 0.0005
    lit_side: int = 160
    model: str | None = None       # a catalogued learned segmenter instead of the classical detector ...
    threshold: float = 0.5         # ... and its probability threshold


def segmenter_for(ctx: StageContext) -> ShadowSegmenter:
    p = ctx.params("shadows", ShadowsParams)
    model = p.model
    if model:
        return ctx.model(f"shadows:{model}", lambda: load_model(
            model, ctx, lambda path: ExportedShadowSegmenter(model, path, ctx.device, float(p.threshold)),
            recorded=lambda path: program_file(model, path)))
    return ctx.model("shadows:classical", lambda: ClassicalShadowDetector(
        p.max_side, p.kernel_frac, p.max_ratio, p.max_chroma_shift, p.min_area_frac, p.lit_side))


def _compute(batch: list[StageInput], ctx: StageContext) -> list[ShadowMap]:
    segmenter = segmenter_for(ctx)
    if isinstance(segmenter, ClassicalShadowDetector) and str(ctx.device).startswith("cuda"):
        masks = detect_batch([item.image for item in batch], [item.deps["instances"] for item in batch], segmenter,
                             ctx.device)
        return [ShadowMap(mask, segmenter.name) for mask in masks]
    return [ShadowMap(segmenter(item.image, item.deps["instances"]), segmenter.name) for item in batch]


STAGE = FeatureStage(name="shadows", version="classical-2", compute=_compute, requires=("instances",),
                     params=ShadowsParams)
