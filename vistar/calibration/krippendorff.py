"""Krippendorff's α for several raters, nominal or ordinal, with missing ratings.

Built on the coincidence matrix: every unit rated by m ≥ 2 raters contributes each ordered pair of its
values with weight 1/(m − 1). α = 1 − D_o / D_e, with observed disagreement D_o from the coincidences and
expected disagreement D_e from the value marginals (Krippendorff, "Computing Krippendorff's Alpha-Reliability").
"""
from __future__ import annotations

import math

import numpy as np


def coincidences(units: list[list]) -> tuple[list, np.ndarray]:
    """`units`: per unit, the values the raters gave (missing ratings left out). Returns (values, o)."""
    values = sorted({v for unit in units for v in unit})
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for unit in units:
        m = len(unit)
        if m < 2:
            continue
        counts = np.zeros(len(values))
        for v in unit:
            counts[index[v]] += 1
        o += (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
    return values, o


def _delta2(level: str, n_c: np.ndarray) -> np.ndarray:
    k = len(n_c)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        d = np.zeros((k, k))
        for c in range(k):
            for g in range(c, k):
                d[c, g] = d[g, c] = (cum[g + 1] - cum[c] - (n_c[c] + n_c[g]) / 2) ** 2
        return d
    raise ValueError(f"level must be 'nominal' or 'ordinal', not '{level}'")


def krippendorff_alpha(units: list[list], level: str = "nominal") -> float:
    """α over `units` (lists of the values raters gave; ordinal values must sort in their natural order).
    NaN when fewer than two pairable values exist or every value is the same (no variation to agree on)."""
    values, o = coincidences(units)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n < 2 or len(values) < 2:
        return math.nan
    d2 = _delta2(level, n_c)
    observed = (o * d2).sum()
    expected = (np.outer(n_c, n_c) * d2).sum() / (n - 1)
    return 1.0 - observed / expected if expected > 0 else math.nan
