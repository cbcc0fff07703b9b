"""The contracts package: MetricResult's three outcomes and Metric's view of its features."""
from __future__ import annotations

import math

import pytest

from vistar.api import Metric, MetricResult


def test_outcomes():
    assert MetricResult.ok(1.7, a=1) == MetricResult(1.0, "ok", None, {"a": 1})
    assert MetricResult.ok(-0.2).score == 0.0
    bad = MetricResult.ok(math.nan)
    assert bad.status == "error" and bad.score is None and "non-finite" in bad.error
    assert MetricResult.skipped("no weight", w="x") == MetricResult(None, "skipped", "no weight", {"w": "x"})
    err = MetricResult.error("TR needs the text", line=3)
    assert err == MetricResult(None, "error", "TR needs the text", {"line": 3})
    assert err.error == "TR needs the text"          # the instance's reason shadows the constructor
    assert MetricResult(0.5).error is None            # the field's default is still None


def test_optional_features_reach_the_metric_only_when_computed():
    m = Metric("X", "TR", "1", ("a",), lambda *args: MetricResult.ok(0), optional=("b", "c"))
    assert m.all_features == ("a", "b", "c")
    assert m.inputs({"a": 1, "b": RuntimeError("failed"), "c": 3}) == {"a": 1, "c": 3}
    with pytest.raises(KeyError):
        m.inputs({"b": 2})
