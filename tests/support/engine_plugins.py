"""A fake feature stage and metrics for engine tests: no model, deterministic, optionally slow.

`install(monkeypatch)` swaps the registry tables for a test; `python -m tests.support.engine_plugins ARGS` runs the real
`vistar` CLI with these tables (used by the SIGKILL test). `VISTAR_TEST_SLEEP` = seconds per image in the stage.
"""
from __future__ import annotations

import os
import time

import numpy as np

from vistar.api import FeatureStage, Metric, MetricResult

CALLS: list[int] = []  # number of images of each stage call


def _stats(batch, ctx):
    CALLS.append(len(batch))
    delay = float(os.environ.get("VISTAR_TEST_SLEEP", "0"))
    out = []
    for item in batch:
        time.sleep(delay)
        if item.controls.get("stage") == "fail":
            out.append(RuntimeError("stage failed on purpose"))
            continue
        img = item.image
        out.append({"mean": float(img.mean()), "h": int(img.shape[0]), "w": int(img.shape[1]),
                    "corner": img[0, 0].tolist()})
    return out


def _mean(features, controls, params, prompt):
    s = features["fake_stats"]
    return MetricResult.ok(s["mean"] / 255.0, h=s["h"], w=s["w"], corner=s["corner"])


def _odd(features, controls, params, prompt):
    """Misbehaves as the prompt's `odd=` control asks: the engine must turn each case into a clean row."""
    mode = controls.get("odd")
    if mode == "nan":
        return MetricResult.ok(float("nan"))
    if mode == "raw_nan":
        return MetricResult(float("nan"), "ok")  # bypasses MetricResult.ok's check
    if mode == "inf":
        return MetricResult(float("inf"), "ok")
    if mode == "details":
        details = {"arr": np.arange(3), (1, 2): float("nan"), "obj": object()}
        details["me"] = details
        return MetricResult(0.25, "ok", None, details)
    if mode == "raise":
        raise RuntimeError("metric failed on purpose")
    if mode == "skip":
        return MetricResult.skipped("nothing to judge")
    if mode == "not_a_result":
        return 0.5
    return MetricResult.ok(1.0 - features["fake_stats"]["mean"] / 255.0)


STAGE = FeatureStage(name="fake_stats", version="1", compute=_stats)
WEIGHT_SHA = {"fake-weight": "a" * 64}   # the sha256 STAGE_LOADING says it loaded (a test swaps it)


def _load_weight():
    from vistar.models.provenance import record_loaded

    record_loaded("fake-weight", "fake-weight.bin", sha256=WEIGHT_SHA["fake-weight"])
    return object()


def _stats_loading(batch, ctx):
    _load_weight()
    return _stats(batch, ctx)


def _stats_held(batch, ctx):
    """Loads the weight once per StageContext and keeps it, as a real stage holds its model (`ctx.model`)."""
    ctx.model("fake-weight", _load_weight)
    return _stats(batch, ctx)


STAGE_LOADING = FeatureStage(name="fake_stats", version="1", compute=_stats_loading)
STAGE_HELD = FeatureStage(name="fake_stats", version="1", compute=_stats_held)
STAGE_WEIGHTED = FeatureStage(name="fake_stats", version="1", compute=_stats, models=("fake-weight",))  # a catalogued weight
METRIC_MEAN = Metric(name="TR", angle="TR", version="1", features=("fake_stats",), fn=_mean)
METRIC_MEAN_V2 = Metric(name="TR", angle="TR", version="2", features=("fake_stats",), fn=_mean)
METRIC_ODD = Metric(name="TR.odd", angle="TR", version="1", features=("fake_stats",), fn=_odd)
FEATURES = {"fake_stats": "tests.support.engine_plugins:STAGE"}
METRICS = {"TR": "tests.support.engine_plugins:METRIC_MEAN", "TR.odd": "tests.support.engine_plugins:METRIC_ODD"}


def install(monkeypatch, metrics: dict | None = None) -> None:
    from vistar.engine import registry

    monkeypatch.setattr(registry, "FEATURES", dict(FEATURES))
    monkeypatch.setattr(registry, "METRICS", dict(metrics or METRICS))
    CALLS.clear()


if __name__ == "__main__":
    from vistar.cli import main
    from vistar.engine import registry

    registry.FEATURES.clear()
    registry.FEATURES.update(FEATURES)
    registry.METRICS.clear()
    registry.METRICS.update(METRICS)
    main()
