"""Bradley–Terry strengths from pairwise outcomes, fitted with Hunter's (2004) MM iteration.

P(i beats j) = p_i / (p_i + p_j). A tie counts half a win to each side. `prior` adds that many virtual
wins to every ordered pair of items, which keeps strengths finite when an item never wins (or never
loses) and joins otherwise disconnected comparison graphs; `prior=0` gives the plain MLE, which exists
only when every item beat and lost to the rest at least once along some chain (Hunter's condition:
the "i beat j" graph is strongly connected). `fit_bradley_terry` says when that fails or the iteration
did not converge, so a strength set by the prior or cut off mid-divergence is not read as data.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse.csgraph import connected_components

DIVERGED = 30.0  # log-strength spread beyond this (win odds e^30) only arises from a diverging fit


@dataclass(frozen=True)
class BTFit:
    strengths: np.ndarray       # geometric mean 1
    iterations: int
    converged: bool
    warnings: list[str] = field(default_factory=list)


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


def fit_bradley_terry(wins: np.ndarray, prior: float = 0.1, max_iter: int = 10_000, tol: float = 1e-10,
                      names: list[str] | None = None) -> BTFit:
    """Strengths maximising the BT likelihood of `wins` (+ `prior` virtual wins), with what makes them unreliable."""
    raw = np.asarray(wins, dtype=float)
    k = len(raw)
    if k == 0:
        return BTFit(np.zeros(0), 0, True)
    w = raw + prior * (1.0 - np.eye(k))
    games = w + w.T
    total_wins = w.sum(axis=1)
    p = np.ones(k)
    converged, it = False, 0
    for it in range(1, max_iter + 1):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1.0), p)
        new = np.where(new > 0, new, 1e-300)
        new /= np.exp(np.mean(np.log(new)))
        step = np.max(np.abs(np.log(new) - np.log(p)))
        p = new
        if step < tol:
            converged = True
            break
    notes = _warnings(raw, p, prior, converged, it, names or [str(i) for i in range(k)])
    return BTFit(p, it, converged, notes)


def _warnings(raw: np.ndarray, p: np.ndarray, prior: float, converged: bool, iterations: int, names: list[str]) -> list[str]:
    notes = []
    n_groups, group = connected_components(raw > 0, directed=True, connection="strong")
    if n_groups > 1:
        beaten = {group[j] for i, j in zip(*np.nonzero(raw > 0)) if group[i] != group[j]}
        top = [names[i] for i in range(len(names)) if group[i] not in beaten]
        what = (f"{', '.join(top)} never lost to the others" if len(beaten) == n_groups - 1 else
                "some groups were never compared with each other")
        gap = (f"the gaps are set by the prior of {prior:g} virtual wins, not by data" if prior > 0 else
               "strengths drift apart without bound")
        notes.append(f"no maximum-likelihood strengths exist ({what}); {gap}")
    if not converged:
        notes.append(f"not converged after {iterations} iterations")
    spread = float(np.ptp(np.log(p))) if len(p) else 0.0
    if spread > DIVERGED:
        notes.append(f"log-strengths span {spread:.0f}: diverging, not a finite estimate")
    return notes


def bradley_terry(wins: np.ndarray, prior: float = 0.1, max_iter: int = 10_000, tol: float = 1e-10) -> np.ndarray:
    """Strengths p (geometric mean 1) maximising the BT likelihood of `wins` (+ `prior` virtual wins)."""
    return fit_bradley_terry(wins, prior, max_iter, tol).strengths
