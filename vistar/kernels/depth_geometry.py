"""Depth-map geometry for GC's depth cues: surface normals by finite differences, their local angular
dispersion, and the mean absolute Laplacian (curvature).

Definitions (the numpy reference is the specification; the Triton kernel must match it):
- normals of the height field z = depth(x, y) with x, y in units of the longest side: central differences
  inside, one-sided at the border (`np.gradient`), n = (−∂z/∂x, −∂z/∂y, 1) / ‖·‖;
- dispersion = mean over interior pixels (WINDOW//2 + 1 from every border, unless the map is too small to
  have any) of the angle between each normal and the mean normal of its WINDOW×WINDOW box (mirror border
  with the edge pixel repeated), 0 on any plane;
- curvature = mean |5-point Laplacian| over pixels with four neighbours, 0 on any plane.
`depth_cues` dispatches: Triton for CUDA tensors (batched, float32), the float64 reference otherwise.
"""
from __future__ import annotations

import numpy as np
from scipy import ndimage

from ._dispatch import is_cuda_tensor, pick


def surface_normals(depth: np.ndarray) -> np.ndarray:
    """(H, W) depth → (H, W, 3) unit normals, float64."""
    depth = np.asarray(depth, np.float64)
    side = max(depth.shape)
    gy, gx = np.gradient(depth * side)
    inv = 1.0 / np.sqrt(gx * gx + gy * gy + 1.0)
    return np.stack([-gx * inv, -gy * inv, inv], -1)


def _interior(shape: tuple[int, int], margin: int) -> tuple[slice, slice]:
    if min(shape) > 2 * margin:
        return slice(margin, shape[0] - margin), slice(margin, shape[1] - margin)
    return slice(None), slice(None)


def normal_dispersion_ref(depth: np.ndarray, window: int) -> float:
    """Mean angle (radians) between each normal and its window's mean normal over the interior."""
    if window < 1:
        raise ValueError(f"normal window must be ≥ 1 pixel, got {window}")
    n = surface_normals(depth)
    mean = ndimage.uniform_filter(n, size=(window, window, 1), mode="reflect")
    length = np.sqrt(np.einsum("hwc,hwc->hw", mean, mean))
    cos = np.einsum("hwc,hwc->hw", n, mean) / np.maximum(length, 1e-12)
    angle = np.arccos(np.clip(cos, -1.0, 1.0))
    return float(angle[_interior(angle.shape, window // 2 + 1)].mean())


def mean_abs_laplacian_ref(depth: np.ndarray) -> float:
    """Mean |d(y−1,x) + d(y+1,x) + d(y,x−1) + d(y,x+1) − 4·d(y,x)| over interior pixels (0 if there are none)."""
    d = np.asarray(depth, np.float64)
    if min(d.shape) < 3:
        return 0.0
    lap = d[:-2, 1:-1] + d[2:, 1:-1] + d[1:-1, :-2] + d[1:-1, 2:] - 4 * d[1:-1, 1:-1]
    return float(np.abs(lap).mean())


def depth_cues_ref(depth: np.ndarray, window: int) -> tuple[float, float]:
    """(normal dispersion, curvature) of one (H, W) map, float64."""
    return normal_dispersion_ref(depth, window), mean_abs_laplacian_ref(depth)


def depth_cues_triton(depth, window: int, block: int = 256):
    """Triton version for a (B, H, W) or (H, W) torch tensor: returns (dispersion (B,), curvature (B,)) float32.

    Pass 1 writes normals and |Laplacian| per pixel; pass 2 sums each pixel's window of normals and writes
    cos and sin of its angle to the window mean; the angle is atan2(sin, cos) (well conditioned near 0,
    unlike arccos in float32) and the interior means are torch reductions (fixed order on the GPU).
    """
    import torch

    from ._depth_geometry_triton import dispersion_kernel, normals_kernel

    if window < 1:
        raise ValueError(f"normal window must be ≥ 1 pixel, got {window}")
    single = depth.ndim == 2
    d = (depth[None] if single else depth).contiguous().to(torch.float32)
    n_b, height, width = d.shape
    if min(height, width) < 2 or window // 2 >= min(height, width):
        raise ValueError(f"depth map {height}×{width} too small for finite differences with window {window}")
    normals = torch.empty((n_b, 3, height, width), dtype=torch.float32, device=d.device)
    lap = torch.empty((n_b, height, width), dtype=torch.float32, device=d.device)
    cos_sin = torch.empty((n_b, 2, height, width), dtype=torch.float32, device=d.device)
    grid = (n_b, _cdiv(height * width, block))
    normals_kernel[grid](d, normals, lap, height, width, float(max(height, width)), BLOCK=block)
    dispersion_kernel[grid](normals, cos_sin, height, width, WINDOW=window, BLOCK=block)
    angle = torch.atan2(cos_sin[:, 1], cos_sin[:, 0])
    dispersion = angle[(slice(None),) + _interior((height, width), window // 2 + 1)].mean(dim=(1, 2))
    curvature = (lap[:, 1:-1, 1:-1].mean(dim=(1, 2)) if min(height, width) >= 3
                 else torch.zeros(n_b, device=d.device))
    return (dispersion[0], curvature[0]) if single else (dispersion, curvature)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def depth_cues(depth, window: int, backend: str = "auto"):
    """Dispatch: Triton for CUDA tensors, the numpy reference otherwise (one small map per image on the CPU
    is a few vectorised passes; a numba loop would not beat it). BACKEND forces "numpy" or "triton"."""
    if backend == "auto":
        backend = "triton" if is_cuda_tensor(depth) else "numpy"
    return pick(BACKENDS, backend, "depth geometry")(depth, window)


BACKENDS = {"numpy": depth_cues_ref, "triton": depth_cues_triton}
