"""Pairwise cosine similarity with a max reduction over rows: the core of CSE's coverage and consistency.

CSE's inputs are a few small host arrays per image, so numpy is the only implementation (a GPU kernel had no
caller and was removed). Ties in the max go to the lowest row index, and a zero vector has cosine 0 with
everything, so results are defined for every input.
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
    """(similarity (N, M), column max (M,), argmax row (M,))."""
    sim = cosine_matrix(a, b)
    values, arg = max_over_rows(sim)
    return sim, values, arg
