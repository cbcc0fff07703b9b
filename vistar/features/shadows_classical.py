"""The classical cast-shadow detector (the `shadows` stage's default; `shadows_torch` runs it batched on a GPU).

A pixel is shadow when its linear luminance is well below the local *lit* level of its surroundings (a grey
closing that fills dark regions narrower than the kernel) while its chromaticity stays close to that lit
level's (a cast shadow darkens a surface without recolouring it much). Object pixels (the `instances` masks)
are never shadow: an object's own dark side is shading, not a cast shadow.
"""
from __future__ import annotations

import cv2
import numpy as np

from ..api import Instances


def srgb_to_linear(image: np.ndarray) -> np.ndarray:
    x = image.astype(np.float32) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


SRGB_TO_LINEAR = srgb_to_linear(np.arange(256, dtype=np.uint8)).astype(np.float32)   # uint8 -> linear, one lookup
LUMA = (0.2126, 0.7152, 0.0722)


def luminance(rgb: np.ndarray) -> np.ndarray:
    return LUMA[0] * rgb[..., 0] + LUMA[1] * rgb[..., 1] + LUMA[2] * rgb[..., 2]


def chroma_shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Largest per-channel difference of the rgb chromaticities of A and B (channels unrolled: numpy's reductions
    over a last axis of 3 cost more than the arithmetic)."""
    sa = np.maximum(a[..., 0] + a[..., 1] + a[..., 2], 1e-4)
    sb = np.maximum(b[..., 0] + b[..., 1] + b[..., 2], 1e-4)
    shift = np.abs(a[..., 0] / sa - b[..., 0] / sb)
    for c in (1, 2):
        np.maximum(shift, np.abs(a[..., c] / sa - b[..., c] / sb), out=shift)
    return shift


def working_size(image: np.ndarray, instances: Instances, max_side: int) -> tuple[np.ndarray, np.ndarray]:
    """(IMAGE reduced so its longest side is at most MAX_SIDE, the union of the object masks at that size)."""
    height, width = image.shape[:2]
    scale = min(1.0, max_side / max(height, width))
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA) if scale < 1 else image
    objects = np.zeros(small.shape[:2], bool)
    for mask in instances.masks:
        m = mask.astype(np.uint8)
        objects |= (cv2.resize(m, size, interpolation=cv2.INTER_NEAREST) if scale < 1 else m).astype(bool)
    return small, objects


def ellipse_kernel(frac: float, shape: tuple[int, int], lit_side: int) -> tuple[int, float]:
    """Closing kernel side at the working resolution SHAPE (FRAC of the shorter side, odd), and the factor by which
    the lit level is reduced before the closing (1 when LIT_SIDE is 0 or not smaller than SHAPE)."""
    k = max(3, int(frac * min(shape)) | 1)
    return k, (min(1.0, lit_side / max(shape)) if lit_side > 0 else 1.0)


class ClassicalShadowDetector:
    """Luminance drop against a local lit level, with chromaticity consistency; see the module docstring.

    The lit level is smooth by construction (a closing wider than any shadow, then a blur of a sixth of its width),
    so its closing runs on an image reduced to LIT_SIDE pixels (default 160) with the kernel scaled alike: a
    ~100-px disc closing at 512 px cost ~0.8 s, at 160 px it costs a few ms. `lit_side: 0` computes it at the
    working resolution (the detector before this change; masks agree at IoU >= 0.98, docs/metrics/li.md)."""

    name = "classical"

    def __init__(self, max_side: int = 512, kernel_frac: float = 0.25, max_ratio: float = 0.7,
                 max_chroma_shift: float = 0.08, min_area_frac: float = 0.0005, lit_side: int = 160):
        self.max_side, self.kernel_frac, self.max_ratio = max_side, kernel_frac, max_ratio
        self.max_chroma_shift, self.min_area_frac, self.lit_side = max_chroma_shift, min_area_frac, int(lit_side)

    def __call__(self, image: np.ndarray, instances: Instances) -> np.ndarray:
        small, objects = working_size(image, instances, self.max_side)
        linear = cv2.GaussianBlur(SRGB_TO_LINEAR[small], (0, 0), 1.0)
        lit = self.lit_level(linear, objects)
        lit_lum = luminance(lit)
        ratio = luminance(linear) / np.maximum(lit_lum, 1e-4)
        mask = ((ratio < self.max_ratio) & (chroma_shift(linear, lit) < self.max_chroma_shift) & ~objects
                & (lit_lum > 1e-3))
        return self.clean(mask, image.shape[:2])

    def clean(self, mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
        """The per-pixel test's mask, opened (3x3), without components below `min_area_frac`, at image size SHAPE."""
        mask = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        mask = _drop_small(mask, self.min_area_frac * mask.size)
        if mask.shape != tuple(shape):
            mask = cv2.resize(mask, (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST)
        return mask.astype(bool)

    def lit_level(self, linear: np.ndarray, objects: np.ndarray) -> np.ndarray:
        """The local lit level: a grey closing that fills dark regions narrower than the kernel, blurred."""
        h, w = linear.shape[:2]
        k, r = ellipse_kernel(self.kernel_frac, (h, w), self.lit_side)
        reduced = (max(1, round(w * r)), max(1, round(h * r)))
        filled = cv2.resize(linear, reduced, interpolation=cv2.INTER_AREA) if r < 1 else linear.copy()
        # any object pixel in a reduced cell marks it: objects must not pull the lit level down (dark objects)
        obj = cv2.resize(objects.astype(np.float32), reduced, interpolation=cv2.INTER_AREA) > 0 if r < 1 else objects
        if obj.any() and (~obj).any():
            filled[obj] = np.percentile(filled[~obj], 90, axis=0)
        kr = max(3, int(round(k * r)) | 1)
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (kr, kr))
        lit = cv2.GaussianBlur(cv2.morphologyEx(filled, cv2.MORPH_CLOSE, kernel), (0, 0), kr / 6)
        return cv2.resize(lit, (w, h), interpolation=cv2.INTER_LINEAR) if r < 1 else lit


def _drop_small(mask: np.ndarray, min_area: float) -> np.ndarray:
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    keep = np.zeros(n, bool)
    keep[1:] = stats[1:, cv2.CC_STAT_AREA] >= min_area
    return keep[labels].astype(np.uint8)
