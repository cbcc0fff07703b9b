"""The toy plugin of docs/engine.md, "Adding a metric / a stage / a protocol": one module holding a stage and an
LI metric named `brightness` (not `LI...`: routing reads the declared angle, not the name)."""
from __future__ import annotations

from vistar.api import FeatureStage, Metric, MetricResult


def _mean(batch, ctx):
    return [float(item.image.mean()) / 255.0 for item in batch]


def _brightness(features, controls, params, prompt):
    if "light" not in controls:
        return MetricResult.error("brightness needs the light direction: add light=... to the prompt")
    return MetricResult.ok(features["toy_mean"] * float(params["gain"]), gain=params["gain"])


STAGE = FeatureStage(name="toy_mean", version="1", compute=_mean)
METRIC = Metric(name="brightness", angle="LI", version="1", features=("toy_mean",), fn=_brightness)
ONTOLOGY_BLOCK = "metrics:\n  brightness:\n    params: {gain: 0.5}\n"
