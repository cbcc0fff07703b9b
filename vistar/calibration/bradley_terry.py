"""Bradley–Terry strengths from pairwise outcomes, fitted with Hunter's (2004) MM iteration.

P(i beats j) = p_i / (p_i + p_j). A tie counts half a win to each side. `prior` adds that many virtual
wins to every ordered pair of items, which keeps strengths finite when an item never wins (or never
loses) and joins otherwise disconnected comparison graphs; `prior=0` gives the plain MLE.
"""
from __future__ import annotations

import numpy as np


def win_matrix(items: list[str], outcomes: list[tuple[str, str, float]]) -> np.ndarray:
    """W[i, j] = wins of i over j from (first, second, result) with result 1 (first wins), 0 (second), 0.5 (tie)."""
    index = {m: i for i, m in enumerate(items)}
    w = np.zeros((len(items), len(items)))
    for a, b, result in outcomes:
        if a == b:
            continue
        w[index[a], index[b]] += result
        w[index[b], index[a]] += 1.0 - result
    return w


def bradley_terry(wins: np.ndarray, prior: float = 0.1, max_iter: int = 10_000, tol: float = 1e-10) -> np.ndarray:
    """Strengths p (geometric mean 1) maximising the BT likelihood of `wins` (+ `prior` virtual wins)."""
    w = np.asarray(wins, dtype=float) + prior * (1.0 - np.eye(len(wins)))
    k = len(w)
    if k == 0:
        return np.zeros(0)
    games = w + w.T
    total_wins = w.sum(axis=1)
    p = np.ones(k)
    for _ in range(max_iter):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1.0), p)
        new = np.where(new > 0, new, 1e-300)
        new /= np.exp(np.mean(np.log(new)))
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            return new
        p = new
    return p
