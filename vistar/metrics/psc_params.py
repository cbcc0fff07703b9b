"""PSC's parameters (`metrics.PSC.params`), shared by the metric and its contact readings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class PSCParams:
    """`metrics.PSC.params` (values and meaning: vistar/data/ontology.yaml, docs/metrics/psc.md)."""

    touch_frac: float
    band_frac: float
    eps_frac: float
    c_ref: float
    attach_enclosure: float
    attach_relax: float
    flush_frac: float
    support_relax: float
    step_frac: float
    rim_low_frac: float
    rim_high_frac: float
    sink_low: float
    sink_high: float
    cube_sink_low: float
    cube_sink_high: float
    top_tol_frac: float
    min_confidence: float
    min_area_frac: float
    min_region_px: int
    kernel: Literal["auto", "numpy", "numba", "triton"] = "auto"
