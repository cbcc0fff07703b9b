"""CPA's combine formula, the one place it is written: the weighted mean of the count, posture and expression
agreements over the terms a prompt asks for (weights renormalised over them), with per-role weight overrides.
The metric scores one image with it; calibration re-scores whole columns of stored sub-scores with it."""
from __future__ import annotations

import numpy as np

from ..api import Combine

WEIGHTS = ("w_c", "w_p", "w_e")                       # ontology parameter of each term, in this order
SUBSCORES = ("s_count", "s_posture", "s_expression")  # the `details` key each term is stored under


def weights(params: dict, role: str | None) -> dict[str, float]:
    """The role's weights: `params["role_weights"][role]` where given, else the defaults `params["w_*"]`."""
    base = {k: float(params[k]) for k in WEIGHTS}
    override = (params.get("role_weights") or {}).get(role or "", {}) or {}
    return {k: float(override.get(k, v)) for k, v in base.items()}


def combine(sub: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(n, 3) sub-scores (NaN: the term does not apply) and (n, 3) weights -> (n,) scores; NaN where no term
    with a positive total weight applies."""
    present = np.isfinite(sub)
    num = (np.where(present, sub, 0.0) * w).sum(axis=1)
    den = (present * w).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def combine_one(s_count: float | None, s_posture: float | None, s_expression: float | None,
                w: dict[str, float]) -> float | None:
    """One image's score (None where no term applies), through the same `combine`."""
    sub = np.array([[np.nan if s is None else s for s in (s_count, s_posture, s_expression)]], dtype=float)
    value = float(combine(sub, np.array([[w[k] for k in WEIGHTS]], dtype=float))[0])
    return None if np.isnan(value) else value


def rescore(sub: np.ndarray, params: dict, roles: np.ndarray) -> np.ndarray:
    """Stored rows re-scored, each with its prompt role's weights (as the metric weighs it)."""
    per_role = {r: weights(params, r) for r in set(roles.tolist())}
    w = np.asarray([[per_role[r][k] for k in WEIGHTS] for r in roles], dtype=float).reshape(len(sub), len(WEIGHTS))
    return combine(sub, w)


COMBINE = Combine(params=WEIGHTS, subscores=SUBSCORES, fn=rescore, per_role=True)
