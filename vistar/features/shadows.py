"""Shadow feature stage: a per-pixel cast-shadow mask, from a classical detector or a learned segmenter.

VISTAR uses a small learned shadow segmenter whose weights are not public. The default here is classical:
a pixel is shadow when its linear luminance is well below the local *lit* level of its surroundings (a grey
closing that fills dark regions narrower than the kernel) while its chromaticity stays close to that lit
level's (a cast shadow darkens a surface without recolouring it much). Object pixels (the `instances` masks)
are never shadow: an object's own dark side is shading, not a cast shadow. Setting `features.shadows.model`
to a catalogue name switches to a learned segmenter (a `torch.export` program, `*.pt2`, mapping a 1x3xHxW
float image in [0,1] to 1x1xHxW logits), loaded through the model layer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np

from ..engine.registry import FeatureStage, StageContext, StageInput
from ..models import record_loaded, resolve_weight
from .types import Instances


@dataclass(frozen=True)
class ShadowMap:
    mask: np.ndarray      # HxW bool, at image resolution
    source: str           # which segmenter produced it


class ShadowSegmenter(Protocol):
    name: str

    def __call__(self, image: np.ndarray, instances: Instances) -> np.ndarray: ...   # HxW bool


def srgb_to_linear(image: np.ndarray) -> np.ndarray:
    x = image.astype(np.float32) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


class ClassicalShadowDetector:
    """Luminance drop against a local lit level, with chromaticity consistency; see the module docstring."""

    name = "classical"

    def __init__(self, max_side: int = 512, kernel_frac: float = 0.25, max_ratio: float = 0.7,
                 max_chroma_shift: float = 0.08, min_area_frac: float = 0.0005):
        self.max_side, self.kernel_frac, self.max_ratio = max_side, kernel_frac, max_ratio
        self.max_chroma_shift, self.min_area_frac = max_chroma_shift, min_area_frac

    def __call__(self, image: np.ndarray, instances: Instances) -> np.ndarray:
        height, width = image.shape[:2]
        scale = min(1.0, self.max_side / max(height, width))
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = cv2.resize(image, size, interpolation=cv2.INTER_AREA) if scale < 1 else image
        objects = np.zeros(small.shape[:2], bool)
        for mask in instances.masks:
            m = mask.astype(np.uint8)
            objects |= (cv2.resize(m, size, interpolation=cv2.INTER_NEAREST) if scale < 1 else m).astype(bool)

        linear = cv2.GaussianBlur(srgb_to_linear(small), (0, 0), 1.0)
        # Objects must not pull the lit level down (dark objects) when the closing spreads over them.
        filled = linear.copy()
        if objects.any() and (~objects).any():
            filled[objects] = np.percentile(linear[~objects], 90, axis=0)
        k = max(3, int(self.kernel_frac * min(small.shape[:2])) | 1)
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        lit = np.stack([cv2.morphologyEx(filled[..., c], cv2.MORPH_CLOSE, kernel) for c in range(3)], -1)
        lit = cv2.GaussianBlur(lit, (0, 0), k / 6)

        lum = linear @ np.array([0.2126, 0.7152, 0.0722], np.float32)
        lit_lum = lit @ np.array([0.2126, 0.7152, 0.0722], np.float32)
        ratio = lum / np.maximum(lit_lum, 1e-4)
        chroma = linear / np.maximum(linear.sum(-1, keepdims=True), 1e-4)
        lit_chroma = lit / np.maximum(lit.sum(-1, keepdims=True), 1e-4)
        shift = np.abs(chroma - lit_chroma).max(-1)
        mask = (ratio < self.max_ratio) & (shift < self.max_chroma_shift) & ~objects & (lit_lum > 1e-3)
        mask = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        mask = _drop_small(mask, self.min_area_frac * mask.size)
        if scale < 1:
            mask = cv2.resize(mask, (width, height), interpolation=cv2.INTER_NEAREST)
        return mask.astype(bool)


def _drop_small(mask: np.ndarray, min_area: float) -> np.ndarray:
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    keep = np.zeros(n, bool)
    keep[1:] = stats[1:, cv2.CC_STAT_AREA] >= min_area
    return keep[labels].astype(np.uint8)


class ExportedShadowSegmenter:
    """A learned segmenter from the model layer: an exported program (RGB in [0,1] -> shadow logits)."""

    def __init__(self, name: str, path, device: str = "cpu", threshold: float = 0.5):
        import torch

        file = path if path.is_file() else next(iter(sorted(path.glob("*.pt2"))), None)
        if file is None:
            raise FileNotFoundError(f"{path}: no exported program (*.pt2) for shadow model '{name}'")
        self.name, self.device, self.threshold = name, device, threshold
        self.module = torch.export.load(str(file)).module().to(device)
        record_loaded(name, file)

    def __call__(self, image: np.ndarray, instances: Instances) -> np.ndarray:
        import torch

        x = torch.from_numpy(np.ascontiguousarray(image)).permute(2, 0, 1)[None].float().div(255).to(self.device)
        with torch.no_grad():
            logits = self.module(x)
        prob = torch.sigmoid(logits)[0, 0].cpu().numpy()
        objects = instances.masks.any(0) if len(instances) else np.zeros(prob.shape, bool)
        return (prob >= self.threshold) & ~objects


def segmenter_for(ctx: StageContext) -> ShadowSegmenter:
    params = ctx.params("shadows")
    model = params.pop("model", None)
    if model:
        threshold = float(params.get("threshold", 0.5))
        return ctx.model(f"shadows:{model}", lambda: ExportedShadowSegmenter(
            model, resolve_weight(model, ctx.model_paths), ctx.device, threshold))
    params.pop("threshold", None)
    return ctx.model("shadows:classical", lambda: ClassicalShadowDetector(**params))


def _compute(batch: list[StageInput], ctx: StageContext) -> list[ShadowMap]:
    segmenter = segmenter_for(ctx)
    return [ShadowMap(segmenter(item.image, item.deps["instances"]), segmenter.name) for item in batch]


STAGE = FeatureStage(name="shadows", version="classical-1", compute=_compute, requires=("instances",))
