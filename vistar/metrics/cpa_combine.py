"""CPA's combine formula, the one place it is written: the weighted mean of the count, posture and expression
agreements over the terms a prompt asks for (weights renormalised over them), with per-role weight overrides.
The metric scores one image with it; calibration re-scores whole columns of stored sub-scores with it."""
from __future__ import annotations

import numpy as np

from ..api import Combine
from .cpa_params import CPAParams

WEIGHTS = ("w_c", "w_p", "w_e")                       # ontology parameter of each term, in this order
SUBSCORES = ("s_count", "s_posture", "s_expression")  # the `details` key each term is stored under


def weights(params: CPAParams, role: str | None) -> dict[str, float]:
    """The role's weights (by WEIGHTS name): its `role_weights` override where given, else the defaults `w_*`."""
    override = params.role_weights.get(role or "")
    given = (override.w_c, override.w_p, override.w_e) if override else (None, None, None)
    return {name: float(default if mine is None else mine)
            for name, default, mine in zip(WEIGHTS, (params.w_c, params.w_p, params.w_e), given)}


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


def rescore(sub: np.ndarray, params: CPAParams, roles: np.ndarray) -> np.ndarray:
    """Stored rows re-scored, each with its prompt role's weights (as the metric weighs it)."""
    per_role = {r: weights(params, r) for r in set(roles.tolist())}
    w = np.asarray([[per_role[r][k] for k in WEIGHTS] for r in roles], dtype=float).reshape(len(sub), len(WEIGHTS))
    return combine(sub, w)


COMBINE = Combine(params=WEIGHTS, subscores=SUBSCORES, fn=rescore, per_role=True)
