"""A fake feature stage and two metrics sharing it, for engine/bench tests that must not load models."""
from __future__ import annotations

from vistar.api import FeatureStage, Metric, MetricResult

CALLS: list[int] = []  # batch size of each stage call


def _brightness(batch, ctx):
    CALLS.append(len(batch))
    return [float(item.image.mean()) / 255.0 for item in batch]


STAGE = FeatureStage(name="fake_brightness", version="1", compute=_brightness)
METRIC_A = Metric(name="TR", angle="TR", version="1", features=("fake_brightness",),
                  fn=lambda f, c, p, pr: MetricResult.ok(f["fake_brightness"]))
METRIC_B = Metric(name="TR.dark", angle="TR", version="1", features=("fake_brightness",),
                  fn=lambda f, c, p, pr: MetricResult.ok(1.0 - f["fake_brightness"]))


def install(monkeypatch) -> None:
    from vistar.engine import registry

    monkeypatch.setattr(registry, "FEATURES", {"fake_brightness": "tests.support.fake_plugins:STAGE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.support.fake_plugins:METRIC_A", "TR.dark": "tests.support.fake_plugins:METRIC_B"})
    CALLS.clear()


def _missing(batch, ctx):
    from vistar.models.errors import MissingWeightError

    raise MissingWeightError("fake-detector")


MISSING_STAGE = FeatureStage(name="fake_missing", version="1", compute=_missing)
METRIC_OPTIONAL = Metric(name="TR", angle="TR", version="1", features=("fake_brightness",),
                         optional=("fake_missing", "fake_brightness2"),
                         fn=lambda f, c, p, pr: MetricResult.ok(0.5, given=sorted(f)))
STAGE2 = FeatureStage(name="fake_brightness2", version="1", compute=_brightness)
METRIC_LI_MISSING = Metric(name="LI", angle="LI", version="1", features=("fake_missing",),
                           fn=lambda f, c, p, pr: MetricResult.ok(1.0))
