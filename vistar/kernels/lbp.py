"""Local binary patterns (8 neighbours on a circle of radius 1) and per-tile code histograms: GC's texture cue.

Codes follow scikit-image's `local_binary_pattern(image, 8, 1, method)` bit for bit (tests compare them):
neighbour i sits at (row − sin(2πi/8), col + cos(2πi/8)), offsets rounded to 5 decimals, its value
bilinearly interpolated with zeros outside the image in skimage's operation order, and bit i is set
when neighbour − centre ≥ 0. "default" = Σ bit_i·2^i; "uniform" = number of set bits when the bit string
has at most two changes between consecutive bits 0…7 (the pair 7→0 is not counted, as in skimage),
else 9. Histograms cover the image minus BORDER pixels on each side, split into TILES×TILES tiles with
edges at ⌊t·h / TILES⌋.

`lbp_codes_ref` is the numpy reference; `lbp_codes_numba` (CPU, one thread: at GC's image sizes
threads cost more than they save; run images in parallel instead) and
`lbp_triton` (CUDA, float64 like the reference; CPU under TRITON_INTERPRET=1) must equal it.
"""
from __future__ import annotations

import numpy as np

from ._dispatch import is_cuda_tensor, numba_available, numba_module, pick

P = 8
METHODS = {"default": 2 ** P, "uniform": P + 2}  # method → number of histogram bins


def offsets() -> tuple[np.ndarray, np.ndarray]:
    """Row and column offsets of the 8 neighbours (float64, rounded to 5 decimals)."""
    angles = 2 * np.pi * np.arange(P, dtype=np.float64) / P
    return np.round(-np.sin(angles), 5), np.round(np.cos(angles), 5)


def _check(image: np.ndarray, method: str) -> np.ndarray:
    if method not in METHODS:
        raise ValueError(f"unknown LBP method '{method}' ({', '.join(METHODS)})")
    image = np.asarray(image)
    if image.ndim != 2:
        raise ValueError(f"LBP needs a single-channel (H, W) image, got shape {image.shape}")
    return np.ascontiguousarray(image, dtype=np.float64)


def lbp_codes_ref(image: np.ndarray, method: str = "uniform") -> np.ndarray:
    """(H, W) grey image → (H, W) int32 LBP codes."""
    img = _check(image, method)
    height, width = img.shape
    padded = np.zeros((height + 2, width + 2))
    padded[1:-1, 1:-1] = img  # one ring of zeros: every sample of radius 1 lands inside it

    def pixel(r, c):  # integer coordinates in image space (−1 … H), broadcast
        return padded[r + 1, c + 1]

    rows, cols = np.arange(height, dtype=np.float64)[:, None], np.arange(width, dtype=np.float64)[None, :]
    bits = []
    for rp, cp in zip(*offsets()):
        r, c = rows + rp, cols + cp
        r0, c0, r1, c1 = (np.floor(r).astype(np.int64), np.floor(c).astype(np.int64),
                          np.ceil(r).astype(np.int64), np.ceil(c).astype(np.int64))
        dr, dc = r - r0, c - c0
        top = (1 - dc) * pixel(r0, c0) + dc * pixel(r0, c1)
        bottom = (1 - dc) * pixel(r1, c0) + dc * pixel(r1, c1)
        bits.append(((1 - dr) * top + dr * bottom) - img >= 0)
    bits = np.stack(bits).astype(np.int32)
    if method == "default":
        return np.tensordot(2 ** np.arange(P, dtype=np.int32), bits, axes=1).astype(np.int32)
    changes = np.abs(np.diff(bits, axis=0)).sum(axis=0)
    return np.where(changes <= 2, bits.sum(axis=0), P + 1).astype(np.int32)


def tile_histograms_ref(codes: np.ndarray, tiles: int, bins: int, border: int = 1) -> np.ndarray:
    """(TILES·TILES, BINS) int64 code counts, tiles in row-major order (an empty tile is a zero row)."""
    inner = codes[border:codes.shape[0] - border, border:codes.shape[1] - border]
    h, w = inner.shape
    out = np.zeros((tiles * tiles, bins), np.int64)
    for ty in range(tiles):
        for tx in range(tiles):
            tile = inner[ty * h // tiles:(ty + 1) * h // tiles, tx * w // tiles:(tx + 1) * w // tiles]
            out[ty * tiles + tx] = np.bincount(tile.ravel(), minlength=bins)[:bins]
    return out


def _numba_kernel():
    numba = numba_module()

    @numba.njit(cache=True)
    def kernel(padded, dr, dc, r_lo, c_lo, uniform, out):
        # padded: image with a ring of zeros; dr[i, y] / dc[i, x]: the reference's fractional offsets;
        # r_lo[i] / c_lo[i]: floor of the neighbour offset (ceil = floor + 1 when the fraction is non-zero)
        height, width = out.shape
        for y in range(height):
            for x in range(width):
                centre = padded[y + 1, x + 1]
                code = 0
                ones = 0
                changes = 0
                prev = 0
                for i in range(P):
                    fr, fc = dr[i, y], dc[i, x]
                    r0, c0 = y + 1 + r_lo[i], x + 1 + c_lo[i]
                    r1, c1 = r0 + (fr != 0.0), c0 + (fc != 0.0)
                    top = (1 - fc) * padded[r0, c0] + fc * padded[r0, c1]
                    bottom = (1 - fc) * padded[r1, c0] + fc * padded[r1, c1]
                    bit = 1 if ((1 - fr) * top + fr * bottom) - centre >= 0 else 0
                    code += bit << i
                    ones += bit
                    if i > 0:
                        changes += abs(bit - prev)
                    prev = bit
                if uniform:
                    code = ones if changes <= 2 else P + 1
                out[y, x] = code

    return kernel


_NUMBA = None


def lbp_codes_numba(image: np.ndarray, method: str = "uniform") -> np.ndarray:
    global _NUMBA
    if _NUMBA is None:
        _NUMBA = _numba_kernel()
    img = _check(image, method)
    height, width = img.shape
    padded = np.zeros((height + 2, width + 2))
    padded[1:-1, 1:-1] = img
    rps, cps = offsets()
    # the same float64 operations as the reference: position = index + offset, fraction = position − floor
    rows = np.arange(height, dtype=np.float64)[None, :] + rps[:, None]
    cols = np.arange(width, dtype=np.float64)[None, :] + cps[:, None]
    dr, dc = rows - np.floor(rows), cols - np.floor(cols)
    r_lo, c_lo = np.floor(rps).astype(np.int64), np.floor(cps).astype(np.int64)
    out = np.empty(img.shape, np.int32)
    _NUMBA(padded, dr, dc, r_lo, c_lo, method == "uniform", out)
    return out


def lbp_triton(images, tiles: int, method: str = "uniform", border: int = 1, block: int = 256):
    """Codes (B, H, W) int32 and tile histograms (B, TILES·TILES, BINS) int32 of a (B, H, W) or (H, W)
    torch tensor in one kernel. Sampling is in float64 with floating-point contraction switched off, so the
    neighbour − centre ≥ 0 comparisons round exactly as the reference's; histogram counts are integer
    atomics, hence deterministic."""
    import torch

    from ._lbp_triton import lbp_kernel

    if method not in METHODS:
        raise ValueError(f"unknown LBP method '{method}' ({', '.join(METHODS)})")
    single = images.ndim == 2
    img = (images[None] if single else images).contiguous().to(torch.float64)
    n_b, height, width = img.shape
    h, w = height - 2 * border, width - 2 * border
    if h < 1 or w < 1:
        raise ValueError(f"image {height}×{width} has no pixels inside a border of {border}")
    bins = METHODS[method]
    rps, cps = offsets()
    table = torch.tensor(np.concatenate([rps, cps]), dtype=torch.float64, device=img.device)
    codes = torch.empty((n_b, height, width), dtype=torch.int32, device=img.device)
    hist = torch.zeros((n_b, tiles * tiles, bins), dtype=torch.int32, device=img.device)
    grid = (n_b, (height * width + block - 1) // block)
    lbp_kernel[grid](img, table, codes, hist, height, width, border, h, w, tiles, bins,
                     UNIFORM=method == "uniform", BLOCK=block, enable_fp_fusion=False)
    return (codes[0], hist[0]) if single else (codes, hist)


def lbp_tile_histograms(image, tiles: int, method: str = "uniform", border: int = 1, backend: str = "auto"):
    """(codes, tile histograms) of one grey image. Dispatch: Triton for CUDA tensors, numba for numpy when
    installed (≈ 4× the vectorised reference and ≈ 3× skimage on one core, docs/performance.md), else the
    reference."""
    if backend == "auto":
        backend = "triton" if is_cuda_tensor(image) else "numba" if numba_available() else "numpy"
    if backend == "triton":
        return lbp_triton(image, tiles, method, border)
    codes = pick(CODE_BACKENDS, backend, "LBP")(image, method)
    return codes, tile_histograms_ref(codes, tiles, METHODS[method], border)


CODE_BACKENDS = {"numpy": lbp_codes_ref, "numba": lbp_codes_numba}
