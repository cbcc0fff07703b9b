"""Seeded percentile bootstrap of a mean.

Each (model, angle) cell draws from its own generator seeded by (seed, cell name), so a cell's CI does not
change when other models or angles are added to the run. The resampled means are kept so that derived
scores (role-weighted sums, macro means over angles) get CIs from the same resamples.
"""
from __future__ import annotations

import zlib

import numpy as np

DEFAULT_RESAMPLES = 1000
MIN_UNITS = 10  # fewer images than this: no interval, as `vistar calibrate` rules (calibration.agreement.MIN_UNITS)
_CHUNK_CELLS = 4_000_000  # resample indices drawn at once: bounds memory for large cells


def cell_rng(seed: int, *names: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(n.encode()) for n in names)])


def bootstrap_means(values: np.ndarray, rng: np.random.Generator, resamples: int = DEFAULT_RESAMPLES) -> np.ndarray:
    """`resamples` means of `values` resampled with replacement (empty input: NaNs)."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return np.full(resamples, np.nan)
    out = np.empty(resamples)
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = values[idx].mean(axis=1)
    return out


def interval(samples: np.ndarray, units: int) -> tuple[float, float]:
    """The 95% CI of a mean over `units` images, or NaNs where it would claim a certainty the data cannot give:
    fewer than MIN_UNITS images (a percentile CI undercovers badly), or every resample equal (zero width)."""
    lo, hi = percentile_ci(samples)
    if units < MIN_UNITS or lo == hi:
        return float("nan"), float("nan")
    return lo, hi


def percentile_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    samples = np.asarray(samples, dtype=np.float64)
    samples = samples[np.isfinite(samples)]
    if len(samples) == 0:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(samples, [tail, 100 - tail])
    return float(lo), float(hi)
