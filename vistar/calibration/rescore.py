"""Re-scorers: recompute a metric's score from the sub-scores it stored in `details`, under new parameters.

This is what makes `calibrate --fit` fast and pure: no image is decoded and no model runs while optuna
tries parameters. Only parameters a re-scorer declares can be fitted; other tunables need a re-run.

Each re-scorer extracts a fixed vector of sub-scores per row once (`extract`), then combines a whole
column of them for a parameter set (`combine`), vectorised.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..api import Metric, parse
from ..engine import registry


@dataclass(frozen=True)
class Rescorer:
    params: tuple[str, ...]                                   # parameters this re-scorer can vary
    subscores: tuple[str, ...]                                # `details` keys it reads
    formula: Callable[[np.ndarray, Any, np.ndarray], np.ndarray]  # the metric's Combine.fn: sub-scores, params, roles
    kind: type[Any]                                           # the metric's parameter dataclass (Metric.params)
    bounds: tuple[float, float] = (0.0, 1.0)
    per_role: bool = False                                    # honours per-role overrides (`role_weights`)

    def combine(self, sub: np.ndarray, params: Mapping[str, Any], roles: np.ndarray) -> np.ndarray:
        """(n,) scores of (n, k) sub-scores under `params`, the metric's whole parameter block as calibration
        edits it (a mapping), for (n,) prompt roles."""
        return self.formula(sub, parse(self.kind, params, "calibrated parameters"), roles)

    def extract(self, details: str | dict | None) -> np.ndarray:
        """Sub-scores of one row; NaN where a sub-score is absent (e.g. no face for the expression term)."""
        if isinstance(details, str):
            try:
                details = json.loads(details) if details else {}
            except ValueError:
                details = {}
        details = details or {}
        out = []
        for key in self.subscores:
            value = details.get(key)
            out.append(float(value) if isinstance(value, (int, float)) and math.isfinite(value) else math.nan)
        return np.asarray(out, dtype=float)


def _of(metric: Metric) -> Rescorer:
    combine = metric.combine
    if combine is None or metric.params is None:   # registry.check refuses a combine without parameters
        raise ValueError(f"metric {metric.name} declares no combine formula or no parameter dataclass")
    return Rescorer(params=combine.params, subscores=combine.subscores, formula=combine.fn, kind=metric.params,
                    per_role=combine.per_role)


# Every registered metric that declares its combine formula (Metric.combine): TR's fuse(), CPA's weighted mean.
RESCORERS: dict[str, Rescorer] = {name: _of(m) for name in registry.metric_names()
                                  if (m := registry.metric(name)).combine is not None}


def rescorable(metric: str, tunable: list[str]) -> list[str]:
    """The tunable parameters of `metric` that can be fitted from stored details."""
    rescorer = RESCORERS.get(metric)
    return [p for p in tunable if rescorer and p in rescorer.params]


def normalise_weights(metric: str, params: dict) -> dict:
    """Weights that enter as a weighted mean are written summing to 1 (their scale carries no meaning)."""
    if metric == "CPA":   # its weights enter as a weighted mean
        names = RESCORERS["CPA"].params
        total = sum(float(params[n]) for n in names)
        if total > 0:
            return {**params, **{n: float(params[n]) / total for n in names}}
    return params
