"""Pairwise cosine similarity with a max reduction over rows: the core of CSE's coverage and consistency.

`cosine_max_ref` is the numpy reference (what metrics call: their inputs are small host arrays);
`cosine_max_triton` computes the same thing in one Triton kernel for embeddings already on a GPU
(bulk re-scoring of stored embeddings). Both break ties in the max towards the lowest row index,
and a zero vector has cosine 0 with everything, so results are defined for every input.
"""
from __future__ import annotations

import numpy as np

EPS = 1e-12


def _unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    norms = np.sqrt((x * x).sum(axis=1, keepdims=True))
    return x / np.maximum(norms, EPS)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, D) × (M, D) → (N, M) cosine similarities, float64."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"embedding widths differ: {a.shape[1]} vs {b.shape[1]}")
    return _unit_rows(a) @ _unit_rows(b).T


def max_over_rows(sim: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise max and the row that attains it (first row on ties)."""
    sim = np.asarray(sim)
    if sim.shape[0] == 0:
        raise ValueError("max over zero rows is undefined")
    arg = np.argmax(sim, axis=0)  # numpy returns the first maximal index
    return sim[arg, np.arange(sim.shape[1])], arg


def cosine_max_ref(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(similarity (N, M), column max (M,), argmax row (M,)) — the reference the Triton kernel must match."""
    sim = cosine_matrix(a, b)
    values, arg = max_over_rows(sim)
    return sim, values, arg


def mean_pairwise_cosine(x: np.ndarray) -> float:
    """Mean cosine over the K·(K−1)/2 unordered pairs of rows; needs K ≥ 2."""
    x = np.atleast_2d(x)
    k = x.shape[0]
    if k < 2:
        raise ValueError(f"mean pairwise cosine needs at least 2 vectors, got {k}")
    sim = cosine_matrix(x, x)
    upper = np.triu_indices(k, 1)
    return float(sim[upper].mean())


def cosine_max_triton(a, b, block_n: int = 16, block_m: int = 16, block_d: int = 32):
    """Triton version of `cosine_max_ref` for torch tensors (float32 compute); returns torch tensors.

    Runs on CUDA tensors, or on CPU tensors under `TRITON_INTERPRET=1` (how the tests check it).
    """
    import torch

    from ._cosine_triton import cosine_max_kernel

    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"expected (N, D) and (M, D), got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[0] == 0:
        raise ValueError("max over zero rows is undefined")
    a = a.contiguous().to(torch.float32)
    b = b.contiguous().to(torch.float32)
    n, m, d = a.shape[0], b.shape[0], a.shape[1]
    sim = torch.empty((n, m), dtype=torch.float32, device=a.device)
    values = torch.empty((m,), dtype=torch.float32, device=a.device)
    arg = torch.empty((m,), dtype=torch.int32, device=a.device)
    grid = ((m + block_m - 1) // block_m,)
    cosine_max_kernel[grid](a, b, sim, values, arg, n, m, d, EPS,
                            BLOCK_N=block_n, BLOCK_M=block_m, BLOCK_D=block_d)
    return sim, values, arg
