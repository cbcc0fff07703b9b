"""CPA's parameters (`metrics.CPA.params`), shared by the metric and its combine formula."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RoleWeights:
    """A role's override of some of the term weights (`role_weights: {SA: {w_p: 0.5}}`); the rest keep the default."""

    w_c: float | None = None
    w_p: float | None = None
    w_e: float | None = None


@dataclass(frozen=True)
class CPAParams:
    """`metrics.CPA.params` (values and meaning: vistar/data/ontology.yaml, docs/metrics/cpa.md)."""

    w_c: float                  # weight of the count term ...
    w_p: float                  # ... the posture term ...
    w_e: float                  # ... and the expression term
    min_visibility: float
    person_class: str
    min_person_confidence: float
    partial_credit: float
    posture_synonyms: Mapping[str, tuple[str, ...]]
    expression_synonyms: Mapping[str, tuple[str, ...]]
    neutral_weight: float = 1.0
    role_weights: Mapping[str, RoleWeights] = field(default_factory=dict)
