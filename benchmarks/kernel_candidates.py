"""numba candidates not kept in the package (no gain worth a second code path); kept only as benchmark evidence
(benchmarks/bench_kernels.py times them against the winners, docs/performance.md records the numbers).
All run on one thread, like what they are compared with: images and pairs parallelise better across
worker processes than inside one small call.

- masked sums: a loop over (image, mask, channel) vs numpy's einsum (no metric needs them yet);
- connected components: two-pass union-find vs scipy.ndimage.label and cv2.connectedComponentsWithStats
  (GC's contour and highlight cues use cv2);
- normalised Levenshtein over a batch of pairs vs rapidfuzz (TR).
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _masked_sums_kernel(values, masks, sums):
    n_b, n_k, n_c, n_px = masks.shape[0], masks.shape[1], values.shape[1], values.shape[2]
    for job in range(n_b * n_k):
        b, k = job // n_k, job % n_k
        for c in range(n_c):
            acc = 0.0
            for i in range(n_px):
                acc += values[b, c, i] * masks[b, k, i]
            sums[b, k, c] = acc


def masked_sums(values: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """values (B, C, H, W) float64, masks (B, K, H, W) bool → Σ mask·value, (B, K, C)."""
    n_b, n_c, n_k = values.shape[0], values.shape[1], masks.shape[1]
    sums = np.zeros((n_b, n_k, n_c))
    _masked_sums_kernel(np.ascontiguousarray(values).reshape(n_b, n_c, -1),
                        np.ascontiguousarray(masks).view(np.uint8).reshape(n_b, n_k, -1), sums)
    return sums


@numba.njit(cache=True)
def _find(parent, i):
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:  # path compression
        parent[i], i = root, parent[i]
    return root


@numba.njit(cache=True)
def _label_kernel(mask, eight, labels):
    height, width = mask.shape
    parent = np.arange(height * width + 1, dtype=np.int32)  # provisional label l lives at parent[l]
    next_label = 1
    # pass 1: provisional labels from the visited neighbours (W, NW, N, NE), unions on conflict
    for y in range(height):
        for x in range(width):
            if not mask[y, x]:
                continue
            best = 0
            for dy, dx in ((0, -1), (-1, -1), (-1, 0), (-1, 1)):
                if not eight and dy != 0 and dx != 0:
                    continue
                yy, xx = y + dy, x + dx
                if yy < 0 or xx < 0 or xx >= width or labels[yy, xx] == 0:
                    continue
                root = _find(parent, labels[yy, xx])
                if best == 0:
                    best = root
                elif root != best:
                    lo, hi = min(root, best), max(root, best)
                    parent[hi] = lo  # the smaller root was created first, i.e. earlier in raster order
                    best = lo
            if best == 0:
                best = next_label
                next_label += 1
            labels[y, x] = best
    # pass 2: final labels numbered by first appearance in raster order (scipy.ndimage.label's numbering)
    final = np.zeros(next_label, np.int32)
    count = 0
    for y in range(height):
        for x in range(width):
            if labels[y, x]:
                root = _find(parent, labels[y, x])
                if final[root] == 0:
                    count += 1
                    final[root] = count
                labels[y, x] = final[root]
    return count


def label(mask: np.ndarray, connectivity: int = 8) -> tuple[np.ndarray, int]:
    """(labels (H, W) int32 numbered like scipy.ndimage.label, number of components)."""
    labels = np.zeros(mask.shape, np.int32)
    n = _label_kernel(np.ascontiguousarray(mask, dtype=np.bool_), connectivity == 8, labels)
    return labels, int(n)


@numba.njit(cache=True)
def _levenshtein_kernel(codes_a, off_a, codes_b, off_b, out):
    for p in range(out.shape[0]):
        a, b = codes_a[off_a[p]:off_a[p + 1]], codes_b[off_b[p]:off_b[p + 1]]
        n, m = a.shape[0], b.shape[0]
        if max(n, m) == 0:
            out[p] = 0.0
            continue
        prev = np.arange(m + 1)
        cur = np.empty(m + 1, np.int64)
        for i in range(1, n + 1):
            cur[0] = i
            for j in range(1, m + 1):
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            prev, cur = cur, prev
        out[p] = prev[m] / max(n, m)


def pack(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points of all strings back to back, and each string's start offset (plus the end)."""
    codes = [np.frombuffer(s.encode("utf-32-le"), np.uint32) for s in strings]
    flat = np.concatenate(codes) if codes else np.zeros(0, np.uint32)
    return flat, np.concatenate([[0], np.cumsum([len(c) for c in codes])]).astype(np.int64)


def levenshtein_normalized(packed_a, packed_b, out: np.ndarray) -> np.ndarray:
    """Levenshtein distance / max(len) per pair of two packed string lists (0 for two empty strings)."""
    _levenshtein_kernel(*packed_a, *packed_b, out)
    return out
