"""The toy plugin of docs/engine.md, "Adding a metric / a stage / a protocol": one module holding a stage and an
LI metric named `brightness` (not `LI...`: routing reads the declared angle, not the name)."""
from __future__ import annotations

from dataclasses import dataclass

from vistar.api import FeatureStage, Metric, MetricResult


@dataclass(frozen=True)
class BrightnessParams:
    """`metrics.brightness.params`: the block is parsed into this when the run is planned (an unknown key or a
    value that is not a number stops the run, naming the key and the file)."""

    gain: float


def _mean(batch, ctx):
    return [float(item.image.mean()) / 255.0 for item in batch]


def _brightness(features, controls, params, prompt):
    if "light" not in controls:
        return MetricResult.error("brightness needs the light direction: add light=... to the prompt")
    return MetricResult.ok(features["toy_mean"] * params.gain, gain=params.gain)


STAGE = FeatureStage(name="toy_mean", version="1", compute=_mean)
METRIC = Metric(name="brightness", angle="LI", version="1", features=("toy_mean",), fn=_brightness,
                params=BrightnessParams)
ONTOLOGY_BLOCK = "metrics:\n  brightness:\n    params: {gain: 0.5}\n"
