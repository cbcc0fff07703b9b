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
from typing import NamedTuple

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
    """Validated copies: labels exactly −1/0/+1 (a 0.6 is an error, not a tie), score differences finite."""
    h, delta = np.asarray(h), np.asarray(delta, dtype=np.float64)
    if h.shape != delta.shape:
        raise ValueError(f"labels and score differences differ in length ({h.shape} vs {delta.shape})")
    if h.dtype.kind not in "biuf" or not ((h == -1) | (h == 0) | (h == 1)).all():
        bad = [v for v in h.ravel().tolist() if isinstance(v, str) or v not in (-1, 0, 1)][:5]
        raise ValueError(f"human labels must be exactly +1, -1 or 0; got {', '.join(map(repr, bad))}")
    if not np.isfinite(delta).all():
        where = np.flatnonzero(~np.isfinite(delta))
        raise ValueError(f"{len(where)} score difference(s) are not finite (first at position {int(where[0])})")
    return h.astype(np.int8), delta


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


class Interval(NamedTuple):
    low: float
    high: float
    note: str | None  # why there is no interval (NaN bounds); None when there is one


MIN_UNITS = 10  # fewer independent units than this: no bootstrap interval (percentile CIs undercover badly)


def units_of(image_a, image_b) -> np.ndarray:
    """Cluster id per judgment: the unordered image pair, so every vote on one pair is resampled together."""
    keys = [(a, b) if a <= b else (b, a) for a, b in zip(image_a, image_b)]
    return np.unique(np.asarray([f"{a}\x1f{b}" for a, b in keys], dtype=object), return_inverse=True)[1].ravel()


def bootstrap_ci(stat, arrays: tuple, seed: int = 0, resamples: int = 1000, level: float = 0.95,
                 units=None, min_units: int = MIN_UNITS) -> Interval:
    """Percentile CI of `stat(*arrays)`, seeded.

    `units`: a cluster id per row (e.g. `units_of(image_a, image_b)`); whole clusters are resampled with
    replacement, so several raters' votes on one pair do not pass for independent evidence. Without it
    each row is its own unit. No interval (NaN, with the reason) below `min_units` units, or when every
    resample gives the same value (a zero-width interval says nothing about uncertainty)."""
    arrays = tuple(np.asarray(a) for a in arrays)
    n = len(arrays[0])
    units = np.arange(n) if units is None else np.unique(np.asarray(units), return_inverse=True)[1].ravel()
    k = int(units.max()) + 1 if n else 0
    if k == 0 or k < min_units:
        return Interval(math.nan, math.nan, f"{k} independent unit(s), fewer than {min_units}: too few for an interval")
    rng = np.random.default_rng(seed)
    batched = BATCHED.get(stat)
    chunk = max(1, 2_000_000 // k)  # resamples per block: bounded memory for the count matrix
    values = []
    for start in range(0, resamples, chunk):
        block = min(chunk, resamples - start)
        drawn = rng.integers(0, k, (block, k)) + k * np.arange(block)[:, None]  # k units drawn per resample
        counts = np.bincount(drawn.ravel(), minlength=block * k).reshape(block, k)  # times each unit was drawn
        if batched is not None:
            values.append(batched(counts, units, *arrays))
        else:
            values.append([stat(*(a[np.repeat(np.arange(n), c[units])] for a in arrays)) for c in counts])
    values = np.concatenate([np.asarray(v, dtype=float) for v in values])
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return Interval(math.nan, math.nan, "the statistic is undefined in every resample")
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    if lo == hi:
        return Interval(math.nan, math.nan, f"every resample gives {lo:.6g}: the bootstrap cannot express the uncertainty")
    return Interval(float(lo), float(hi), None)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _resampled_sums(counts: np.ndarray, units: np.ndarray, *indicators: np.ndarray) -> list[np.ndarray]:
    """Per resample, the sum of each per-row indicator: (times each unit was drawn) @ (its sum within the unit)."""
    k, counts = counts.shape[1], counts.astype(np.float64)  # float: the product runs in BLAS
    return [counts @ np.bincount(units, weights=ind.astype(float), minlength=k) for ind in indicators]


def _ppa_resampled(counts, units, h, delta) -> np.ndarray:
    """`ppa` of every resample at once (same numbers as calling it on each resample's rows)."""
    h, delta = _arrays(h, delta)
    keep = h != 0
    right, judged = _resampled_sums(counts, units, keep & (h * delta > 0), keep)
    return _ratio(right, judged)


def _tau_b_resampled(counts, units, h, delta) -> np.ndarray:
    h, delta = _arrays(h, delta)
    mtie, htie, agree = delta == 0, h == 0, h * np.sign(delta) > 0
    c, d, th, tm = _resampled_sums(counts, units, ~htie & ~mtie & agree, ~htie & ~mtie & ~agree, htie & ~mtie, ~htie & mtie)
    return _ratio(c - d, np.sqrt((c + d + tm) * (c + d + th)))


BATCHED = {ppa: _ppa_resampled, kendall_tau_b: _tau_b_resampled}  # statistics `bootstrap_ci` evaluates in bulk


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
