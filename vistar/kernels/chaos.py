"""Per-pair contact statistics for PSC's chaos metric: the hot loop over instance pairs.

For a pair (A, B) the contact region is every pixel of one mask within `touch_px` (Chebyshev distance) of
the other, overlap included; the band is every pixel within `band_px` of the contact region. With
A' = A ∖ B and B' = B ∖ A (overlap pixels carry one depth value for two objects, so they belong to neither):

    stats[p] = [Σd, n over A'∩band,  Σd, n over B'∩band,  Σd, n over A'∖band,  Σd, n over B'∖band,  |contact|]

`pair_stats_ref` is the numpy reference; `pair_stats_numba` (CPU, parallel over pairs) and
`pair_stats_triton` (GPU; CPU under TRITON_INTERPRET=1) must match it. `pair_stats` picks one.
"""
from __future__ import annotations

import numpy as np
from scipy import ndimage

from ._dispatch import numba_module

N_STATS = 9


def dilate(masks: np.ndarray, radius: int) -> np.ndarray:
    """Square (Chebyshev) dilation of a mask or a stack of masks; pixels outside the image count as empty."""
    if radius <= 0:
        return masks.astype(bool)
    size = (1,) * (masks.ndim - 2) + (2 * radius + 1, 2 * radius + 1)
    return ndimage.maximum_filter(masks.astype(np.uint8), size=size, mode="constant", cval=0).astype(bool)


def pair_stats_ref(masks: np.ndarray, depth: np.ndarray, pairs: np.ndarray, touch_px: int, band_px: int) -> np.ndarray:
    """Reference: one pair at a time with whole-image boolean algebra, float64 sums."""
    out = np.zeros((len(pairs), N_STATS))
    depth = depth.astype(np.float64)
    for p, (i, j) in enumerate(np.asarray(pairs, dtype=np.int64)):
        a, b = masks[i].astype(bool), masks[j].astype(bool)
        contact = (a & dilate(b, touch_px)) | (b & dilate(a, touch_px))
        band = dilate(contact, band_px)
        a_only, b_only = a & ~b, b & ~a
        for k, region in enumerate((a_only & band, b_only & band, a_only & ~band, b_only & ~band)):
            out[p, 2 * k] = depth[region].sum()
            out[p, 2 * k + 1] = region.sum()
        out[p, 8] = contact.sum()
    return out


def _numba_kernel():
    numba = numba_module()

    @numba.njit(parallel=True, cache=True)
    def kernel(masks, dilated, depth, pairs, band_px, out):
        n_pairs = pairs.shape[0]
        height, width = depth.shape
        for p in numba.prange(n_pairs):
            i, j = pairs[p, 0], pairs[p, 1]
            # integral image of the contact map, so "any contact within band_px" is one box sum per pixel
            integral = np.zeros((height + 1, width + 1), np.int32)
            n_contact = 0
            for y in range(height):
                row = 0
                for x in range(width):
                    c = (masks[i, y, x] and dilated[j, y, x]) or (masks[j, y, x] and dilated[i, y, x])
                    row += c
                    n_contact += c
                    integral[y + 1, x + 1] = integral[y, x + 1] + row
            acc = np.zeros(N_STATS)
            for y in range(height):
                y0, y1 = max(0, y - band_px), min(height, y + band_px + 1)
                for x in range(width):
                    a, b = masks[i, y, x], masks[j, y, x]
                    if a == b:
                        continue  # in neither mask, or in the overlap
                    x0, x1 = max(0, x - band_px), min(width, x + band_px + 1)
                    in_band = integral[y1, x1] - integral[y0, x1] - integral[y1, x0] + integral[y0, x0] > 0
                    k = (0 if a else 1) + (0 if in_band else 2)
                    acc[2 * k] += depth[y, x]
                    acc[2 * k + 1] += 1.0
            acc[8] = n_contact
            out[p, :] = acc

    return kernel


_NUMBA = None


def pair_stats_numba(masks: np.ndarray, depth: np.ndarray, pairs: np.ndarray, touch_px: int, band_px: int) -> np.ndarray:
    global _NUMBA
    if _NUMBA is None:
        _NUMBA = _numba_kernel()
    masks = np.ascontiguousarray(masks, dtype=np.bool_)
    dilated = np.ascontiguousarray(dilate(masks, touch_px))
    out = np.zeros((len(pairs), N_STATS))
    if len(pairs):
        _NUMBA(masks, dilated, np.ascontiguousarray(depth, dtype=np.float64),
               np.ascontiguousarray(pairs, dtype=np.int64), int(band_px), out)
    return out


MAX_LAUNCH_PX = 1 << 28  # pair·pixels per launch: caps the two int8 (pairs, H·W) buffers at 256 MiB each


def launch_chunks(n_pairs: int, hw: int, max_px: int = MAX_LAUNCH_PX) -> list[tuple[int, int]]:
    """[start, stop) pair ranges, each with (stop − start)·hw ≤ max_px (one pair per launch when one image
    alone is larger): the per-launch buffers stay bounded however many pairs a detector returns."""
    per = max(1, max_px // max(hw, 1))
    return [(start, min(start + per, n_pairs)) for start in range(0, n_pairs, per)]


def pair_stats_triton(masks: np.ndarray, depth: np.ndarray, pairs: np.ndarray, touch_px: int, band_px: int,
                      device: str = "cuda", block: int = 1024, max_launch_px: int = MAX_LAUNCH_PX) -> np.ndarray:
    """Triton version: per (pair, pixel block) programs in three O(band_px) passes, pairs in launches of at
    most `max_launch_px` pair·pixels; float64 per-block partial sums are added on the host in a fixed order
    (no atomics), so the result does not depend on scheduling or on how pairs are split into launches, and
    matches the float64 reference and numba to rounding (rtol 1e-12) whichever backend `auto` picks."""
    import torch

    from ._chaos_triton import band_stats_kernel, contact_kernel, row_max_kernel

    n_pairs = len(pairs)
    if n_pairs == 0:
        return np.zeros((0, N_STATS))
    height, width = depth.shape
    hw = height * width
    n_blocks = (hw + block - 1) // block
    as_t = lambda x, dt: torch.as_tensor(np.ascontiguousarray(x), device=device).to(dt)  # noqa: E731
    masks_t, dilated_t, depth_t = as_t(masks, torch.int8), as_t(dilate(masks, touch_px), torch.int8), as_t(depth, torch.float64)
    out = np.zeros((n_pairs, N_STATS))
    for start, stop in launch_chunks(n_pairs, hw, max_launch_px):
        pairs_t = as_t(np.asarray(pairs)[start:stop], torch.int32)
        contact = torch.empty((stop - start, hw), dtype=torch.int8, device=device)
        rows = torch.empty_like(contact)
        partial = torch.zeros((stop - start, n_blocks, N_STATS), dtype=torch.float64, device=device)
        grid = (stop - start, n_blocks)
        contact_kernel[grid](masks_t, dilated_t, pairs_t, contact, hw, BLOCK=block)
        row_max_kernel[grid](contact, rows, height, width, int(band_px), BLOCK=block)
        band_stats_kernel[grid](masks_t, rows, contact, depth_t, pairs_t, partial, height, width,
                                n_blocks, int(band_px), BLOCK=block)
        out[start:stop] = partial.cpu().numpy().sum(axis=1)
    return out


def pair_stats(masks: np.ndarray, depth: np.ndarray, pairs: np.ndarray, touch_px: int, band_px: int,
               backend: str = "auto") -> np.ndarray:
    """Dispatch: `auto` uses Triton only for large jobs on a CUDA machine, else numba when installed, else numpy."""
    if backend == "auto":
        backend = _auto_backend(len(pairs) * depth.size)
    if backend == "triton":
        return pair_stats_triton(masks, depth, pairs, touch_px, band_px)
    if backend == "numba":
        return pair_stats_numba(masks, depth, pairs, touch_px, band_px)
    if backend == "numpy":
        return pair_stats_ref(masks, depth, pairs, touch_px, band_px)
    raise ValueError(f"unknown chaos kernel backend '{backend}' (auto, numpy, numba, triton)")


TRITON_MIN_WORK = 1 << 24  # pair·pixels below which host→GPU copies cost more than they save


def _auto_backend(work: int) -> str:
    import importlib.util

    if work >= TRITON_MIN_WORK and importlib.util.find_spec("triton") is not None:
        import torch

        if torch.cuda.is_available():
            return "triton"
    return "numba" if importlib.util.find_spec("numba") is not None else "numpy"
