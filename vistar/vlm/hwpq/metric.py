"""SF, CUL and MA: the HWPQ score of the image's questionnaire (pure function of the `hwpq` stage output)."""
from __future__ import annotations

from ...api import Metric, MetricResult
from .online import HwpqOutcome


def _hwpq(features: dict, controls: dict, params: dict, prompt) -> MetricResult:
    outcome: HwpqOutcome = features["hwpq"]
    value, details = outcome.result()
    return MetricResult.ok(value, **details)


SF = Metric(name="SF", angle="SF", version="1", features=("hwpq",), fn=_hwpq)
CUL = Metric(name="CUL", angle="CUL", version="1", features=("hwpq",), fn=_hwpq)
MA = Metric(name="MA", angle="MA", version="1", features=("hwpq",), fn=_hwpq)
