"""Agreement between a metric and human pairwise preferences.

Inputs are aligned arrays over judged pairs: `h` is the human label (+1: A preferred, −1: B preferred,
0: tie) and `delta` = S(A) − S(B), the metric's score difference.

- PPA (VISTAR): over pairs humans did not tie, the share where the metric strictly prefers the same image;
  a metric tie (S(A) = S(B)) counts as wrong.
- acc23 (Deutsch et al. 2023, "Ties Matter"): accuracy over all pairs, ties included, where the metric
  predicts a tie when |delta| ≤ ε and ε is chosen to maximise the accuracy (tie calibration).
- Kendall τ-b in its pairwise form (C − D) / sqrt((C + D + Tm)(C + D + Th)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, chi2


@dataclass(frozen=True)
class PairStats:
    """Counts of the 3×3 human-vs-metric table: C concordant, D discordant, Th human-only ties,
    Tm metric-only ties, Thm ties for both."""

    C: int
    D: int
    Th: int
    Tm: int
    Thm: int

    @property
    def n(self) -> int:
        return self.C + self.D + self.Th + self.Tm + self.Thm


def _arrays(h, delta) -> tuple[np.ndarray, np.ndarray]:
    h, delta = np.asarray(h, dtype=np.int8), np.asarray(delta, dtype=np.float64)
    if h.shape != delta.shape:
        raise ValueError(f"labels and score differences differ in length ({h.shape} vs {delta.shape})")
    if not np.isin(h, (-1, 0, 1)).all():
        raise ValueError("human labels must be +1, -1 or 0")
    return h, delta


def pair_stats(h, delta, eps: float = 0.0) -> PairStats:
    h, delta = _arrays(h, delta)
    mtie = np.abs(delta) <= eps
    htie = h == 0
    agree = h * np.sign(delta) > 0
    return PairStats(C=int((~htie & ~mtie & agree).sum()), D=int((~htie & ~mtie & ~agree).sum()),
                     Th=int((htie & ~mtie).sum()), Tm=int((~htie & mtie).sum()), Thm=int((htie & mtie).sum()))


def ppa(h, delta) -> float:
    """Pairwise prediction accuracy over non-tie human pairs (NaN when there are none)."""
    h, delta = _arrays(h, delta)
    keep = h != 0
    if not keep.any():
        return math.nan
    return float((h[keep] * delta[keep] > 0).mean())


def acc23(h, delta) -> tuple[float, float]:
    """Tie-calibrated pairwise accuracy and the ε that achieves it.

    Candidate thresholds are 0 and every |delta| (the accuracy only changes there); the smallest ε
    reaching the maximum is returned. One sort plus cumulative sums: O(n log n).
    """
    h, delta = _arrays(h, delta)
    n = len(h)
    if n == 0:
        return math.nan, math.nan
    mag = np.abs(delta)
    order = np.argsort(mag, kind="stable")
    mag_s, h_s = mag[order], h[order]
    agree_s = (h_s * np.sign(delta[order]) > 0)
    cands = np.unique(np.concatenate([[0.0], mag_s]))
    # pairs with |delta| ≤ t are metric ties: correct iff human tie; the rest correct iff they agree
    upto = np.searchsorted(mag_s, cands, side="right")
    tie_cum = np.concatenate([[0], np.cumsum(h_s == 0)])
    agree_cum = np.concatenate([[0], np.cumsum(agree_s)])
    correct = tie_cum[upto] + (agree_cum[-1] - agree_cum[upto])
    best = int(np.argmax(correct))  # first maximum: the smallest ε
    return float(correct[best] / n), float(cands[best])


def kendall_tau_b(h, delta) -> float:
    s = pair_stats(h, delta, eps=0.0)
    denom = math.sqrt((s.C + s.D + s.Tm) * (s.C + s.D + s.Th))
    return (s.C - s.D) / denom if denom > 0 else math.nan


def bootstrap_ci(stat, arrays: tuple, seed: int = 0, resamples: int = 1000, level: float = 0.95) -> tuple[float, float]:
    """Percentile CI of `stat(*arrays)` over pairs resampled with replacement (seeded)."""
    n = len(arrays[0])
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        idx = rng.integers(0, n, n)
        values.append(stat(*(np.asarray(a)[idx] for a in arrays)))
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return math.nan, math.nan
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


@dataclass(frozen=True)
class McNemar:
    """Paired comparison of two metrics on the same pairs: b = only the first right, c = only the second right."""

    n: int
    b: int
    c: int
    statistic: float   # continuity-corrected χ², 1 dof
    p_chi2: float
    p_exact: float     # two-sided exact binomial test on b of b + c (use this when b + c is small)


def mcnemar(correct_a, correct_b) -> McNemar:
    a, b_ = np.asarray(correct_a, dtype=bool), np.asarray(correct_b, dtype=bool)
    if a.shape != b_.shape:
        raise ValueError("McNemar needs the two metrics judged on the same pairs")
    b, c = int((a & ~b_).sum()), int((~a & b_).sum())
    if b + c == 0:
        return McNemar(len(a), 0, 0, 0.0, 1.0, 1.0)
    stat = (abs(b - c) - 1) ** 2 / (b + c)
    return McNemar(len(a), b, c, float(stat), float(chi2.sf(stat, 1)), float(binomtest(b, b + c, 0.5).pvalue))
