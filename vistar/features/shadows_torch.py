"""The classical shadow detector as batched torch operations, for runs on a GPU (`--device cuda`).

Same steps as `ClassicalShadowDetector` (features/shadows_classical.py), on a batch of images of one working size at once:
sRGB lookup, Gaussian blur, area reduction, percentile fill of objects, elliptic closing, blur, bilinear upsample,
luminance ratio and chromaticity test. The parts that are cheap and have no torch counterpart stay with OpenCV
on the host, identical to the numpy detector: resizing the uint8 image and masks to the working size before
upload, and the 3x3 opening and small-component removal of the downloaded mask. Kernels (Gaussian, elliptic
structuring element) are taken from OpenCV itself and borders follow OpenCV's (reflect-101 for blurs, neutral
for morphology), so on CPU tensors the masks equal the numpy detector's up to float rounding at the threshold
(tests/test_li_shadows_torch.py states the tolerance).
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from ..api import Instances
from .shadows_classical import LUMA, SRGB_TO_LINEAR, ClassicalShadowDetector, ellipse_kernel, working_size


def detect_batch(images: list[np.ndarray], instances: list[Instances], detector: ClassicalShadowDetector,
                 device: str) -> list[np.ndarray]:
    """HxW bool shadow masks for IMAGES, computed on DEVICE in one pass per working size (input order kept)."""
    prepared = [working_size(image, inst, detector.max_side) for image, inst in zip(images, instances)]
    masks: list[np.ndarray | None] = [None] * len(images)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (small, _) in enumerate(prepared):
        groups.setdefault(small.shape[:2], []).append(i)
    for idx in groups.values():
        raw = _raw_masks(np.stack([prepared[i][0] for i in idx]), np.stack([prepared[i][1] for i in idx]), detector, device)
        for i, mask in zip(idx, raw):
            masks[i] = detector.clean(mask, images[i].shape[:2])
    return masks


def _raw_masks(small: np.ndarray, objects: np.ndarray, det: ClassicalShadowDetector, device: str) -> np.ndarray:
    """(B, H, W) bool masks before the opening: the per-pixel test of the numpy detector, batched."""
    import torch

    lut = torch.from_numpy(SRGB_TO_LINEAR).to(device)
    x = lut[torch.from_numpy(small).to(device).long()].permute(0, 3, 1, 2)          # (B, 3, H, W) linear
    obj = torch.from_numpy(objects).to(device)
    linear = gaussian_blur(x, 1.0)
    lit = _lit_level(linear, obj, det)
    w = torch.tensor(LUMA, dtype=x.dtype, device=device).view(1, 3, 1, 1)
    lit_lum = (lit * w).sum(1)
    ratio = (linear * w).sum(1) / lit_lum.clamp_min(1e-4)
    chroma = linear / linear.sum(1, keepdim=True).clamp_min(1e-4)
    lit_chroma = lit / lit.sum(1, keepdim=True).clamp_min(1e-4)
    shift = (chroma - lit_chroma).abs().amax(1)
    mask = (ratio < det.max_ratio) & (shift < det.max_chroma_shift) & ~obj & (lit_lum > 1e-3)
    return mask.cpu().numpy()


def _lit_level(linear, objects, det: ClassicalShadowDetector):
    import torch

    b, _, h, w = linear.shape
    k, r = ellipse_kernel(det.kernel_frac, (h, w), det.lit_side)
    if r < 1:
        rh, rw = max(1, round(h * r)), max(1, round(w * r))
        ah, aw = (torch.from_numpy(area_matrix(n, m)).to(linear) for n, m in ((h, rh), (w, rw)))
        filled = ah @ linear @ aw.T
        obj = (ah @ objects.to(linear.dtype).unsqueeze(1) @ aw.T).squeeze(1) > 0
    else:
        filled, obj = linear.clone(), objects
    for i in range(b):   # the fill value is each image's own 90th percentile of its non-object cells
        free, taken = ~obj[i], obj[i]
        if taken.any() and free.any():
            values = filled[i][:, free]
            fill = torch.quantile(values.double(), 0.9, dim=1).to(filled.dtype)
            filled[i][:, taken] = fill[:, None].expand(-1, int(taken.sum()))
    kr = max(3, int(round(k * r)) | 1)
    lit = gaussian_blur(closing(filled, kr), kr / 6)
    if r < 1:
        lit = torch.nn.functional.interpolate(lit, size=(h, w), mode="bilinear", align_corners=False)
    return lit


@lru_cache(maxsize=32)
def area_matrix(n: int, m: int) -> np.ndarray:
    """(M, N) weights of OpenCV's INTER_AREA reduction of N samples to M: each output averages the inputs its
    interval [i·N/M, (i+1)·N/M) covers, partial pixels by their covered fraction."""
    scale = n / m
    out = np.zeros((m, n), np.float64)
    for i in range(m):
        lo, hi = i * scale, (i + 1) * scale
        for j in range(int(np.floor(lo)), min(n, int(np.ceil(hi)))):
            out[i, j] = min(hi, j + 1) - max(lo, j)
    return (out / scale).astype(np.float32)


def gaussian_blur(x, sigma: float):
    """cv2.GaussianBlur(x, (0, 0), sigma) for float images: OpenCV's kernel size and taps, reflect-101 border."""
    import torch

    size = int(round(sigma * 4 * 2 + 1)) | 1
    taps = torch.from_numpy(cv2.getGaussianKernel(size, sigma).astype(np.float32).ravel()).to(x)
    c = x.shape[1]
    pad = size // 2
    rows = torch.arange(x.shape[2]), torch.arange(x.shape[3])
    x = x[:, :, reflect101(rows[0], pad).to(x.device)][:, :, :, reflect101(rows[1], pad).to(x.device)]
    x = torch.nn.functional.conv2d(x, taps.view(1, 1, 1, -1).expand(c, 1, 1, size), groups=c)
    return torch.nn.functional.conv2d(x, taps.view(1, 1, -1, 1).expand(c, 1, size, 1), groups=c)


def reflect101(index, pad: int):
    """Indices of a 1-D axis padded by PAD on each side with OpenCV's BORDER_REFLECT_101 (gfedcb|abcdefgh|gfedcba),
    repeating the reflection when PAD exceeds the axis."""
    import torch

    n = len(index)
    i = torch.arange(-pad, n + pad)
    if n == 1:
        return torch.zeros_like(i)
    period = 2 * (n - 1)
    i = torch.remainder(i, period)
    return torch.where(i < n, i, period - i)


def closing(x, size: int):
    """Grey closing with OpenCV's elliptic structuring element of SIZE: dilation then erosion, each the max (min)
    over the element's rows of a horizontal run, with borders that never win (as cv2.morphologyEx)."""
    return _morph(_morph(x, size, dilate=True), size, dilate=False)


def _morph(x, size: int, dilate: bool):
    import torch

    element = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
    anchor = size // 2
    sign = 1.0 if dilate else -1.0
    h, w = x.shape[-2:]
    padded = torch.nn.functional.pad(sign * x, (anchor, anchor, anchor, anchor), value=float("-inf"))
    runs = [(dy, int(cols[0]), int(cols[-1] - cols[0] + 1)) for dy, cols in
            ((dy, np.flatnonzero(element[dy])) for dy in range(size)) if len(cols)]
    widest = running_max(padded, {width for _, _, width in runs})
    out = None
    for dy, start, width in runs:
        run = widest[width][..., dy:dy + h, start:start + w]
        out = run if out is None else torch.maximum(out, run)
    return sign * out


def running_max(x, widths: set[int]) -> dict:
    """{W: y} with y[..., j] = max(x[..., j:j + W]) for each W, from a doubling pyramid (x, max of pairs, of
    fours, ...): two maxima per width whatever its size, where a pooling window costs W per pixel."""
    import torch

    levels = {1: x}
    step = 1
    while 2 * step <= max(widths):
        prev = levels[step]
        levels[2 * step] = torch.maximum(prev[..., :-step], prev[..., step:])
        step *= 2
    out = {}
    length = x.shape[-1]
    for width in widths:
        k = 1 << (width.bit_length() - 1)   # largest power of two <= width
        level = levels[k]
        n = length - width + 1
        out[width] = torch.maximum(level[..., :n], level[..., width - k:width - k + n])
    return out
