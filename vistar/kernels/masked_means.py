"""Batched masked means: for B images and K masks each, the mean of a value map (depth, a colour channel,
a feature map) over each mask — the reduction behind per-object statistics.

    means[b, k, c] = Σ_{h,w} masks[b, k, h, w] · values[b, c, h, w] / Σ_{h,w} masks[b, k, h, w]

An empty mask has no mean: NaN, with count 0, so a caller can tell "no pixels" from "mean 0".
`masked_means_ref` is the numpy reference (float64, one einsum);
`masked_means_triton` (CUDA; CPU under TRITON_INTERPRET=1, float32 loads and sums) must match it.
There is no numba path in the package: a numba loop measured 2× faster on one channel and 10 % slower on three
(benchmarks/bench_kernels.py, docs/performance.md), and no CPU caller needs it yet; it waits in
benchmarks/kernel_candidates.py.
"""
from __future__ import annotations

import numpy as np

from ._dispatch import is_cuda_tensor, pick


def _shapes(values, masks):
    """Accept values (B, H, W) or (B, C, H, W) and masks (B, K, H, W); return values as (B, C, H, W)."""
    squeeze = values.ndim == 3
    if squeeze:
        values = values[:, None]
    if values.ndim != 4 or masks.ndim != 4:
        raise ValueError(f"expected values (B, [C,] H, W) and masks (B, K, H, W), got {tuple(values.shape)} "
                         f"and {tuple(masks.shape)}")
    if values.shape[0] != masks.shape[0] or values.shape[2:] != masks.shape[2:]:
        raise ValueError(f"values {tuple(values.shape)} and masks {tuple(masks.shape)} differ in batch or size")
    return values, squeeze


def _finish(sums, counts, squeeze):
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts[..., None]
    means[counts == 0] = np.nan
    return (means[..., 0] if squeeze else means), counts


def masked_means_ref(values: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(means (B, K[, C]) float64, NaN where a mask is empty; counts (B, K) int64)."""
    values, squeeze = _shapes(np.asarray(values), np.asarray(masks))
    masks = np.asarray(masks).astype(bool)
    counts = np.count_nonzero(masks.reshape(masks.shape[0], masks.shape[1], -1), axis=2).astype(np.int64)
    sums = np.einsum("bkhw,bchw->bkc", masks, values.astype(np.float64))  # bool × float64: exact 0/1 weights
    return _finish(sums, counts, squeeze)


def masked_means_triton(values, masks, block: int = 1024):
    """Triton version for torch tensors: one program per (b, k, c) walks the H·W pixels in BLOCK chunks.

    Returns torch tensors (means float32 with NaN for empty masks, counts int64) on the input's device.
    """
    import torch

    from ._masked_means_triton import masked_means_kernel

    values, squeeze = _shapes(values, masks)
    n_b, n_c, height, width = values.shape
    n_k = masks.shape[1]
    values = values.contiguous().to(torch.float32)
    masks = masks.contiguous().to(torch.uint8)
    sums = torch.empty((n_b, n_k, n_c), dtype=torch.float32, device=values.device)
    counts = torch.empty((n_b, n_k, n_c), dtype=torch.int32, device=values.device)
    masked_means_kernel[(n_b * n_k * n_c,)](values, masks, sums, counts, n_k, n_c, height * width, BLOCK=block)
    counts = counts[..., 0].to(torch.int64)
    means = sums / counts[..., None]
    means = torch.where(counts[..., None] == 0, torch.full_like(means, float("nan")), means)
    return (means[..., 0] if squeeze else means), counts


def masked_means(values, masks, backend: str = "auto"):
    """Dispatch: Triton for CUDA tensors, the numpy reference otherwise. BACKEND forces "numpy" or "triton"."""
    if backend == "auto":
        backend = "triton" if is_cuda_tensor(values) else "numpy"
    return pick(BACKENDS, backend, "masked means")(values, masks)


BACKENDS = {"numpy": masked_means_ref, "triton": masked_means_triton}
