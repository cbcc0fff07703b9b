"""A skipped stage skips every stage downstream of it, however deep (found benchmarking CSE with GC prompts:
the grandchild of a skipped stage used to crash the bench with a KeyError)."""
import numpy as np

from vistar.api import FeatureStage, Metric, MetricResult
from vistar.engine.bench import Item, run_bench
from vistar.models.errors import MissingWeightError
from vistar.prompts_dsl import parse_prompt


def _missing(batch, ctx):
    raise MissingWeightError("fake-detector")


MISSING = FeatureStage(name="fake_missing", version="1", compute=_missing)
CHILD = FeatureStage(name="fake_child", version="1", compute=lambda b, c: [1.0] * len(b), requires=("fake_missing",))
GRANDCHILD = FeatureStage(name="fake_grandchild", version="1", compute=lambda b, c: [1.0] * len(b), requires=("fake_child",))
METRIC = Metric(name="TR", angle="TR", version="1", features=("fake_grandchild",), fn=lambda f, c, p, pr: MetricResult.ok(1.0))


def test_grandchild_of_a_skipped_stage_is_skipped(monkeypatch):
    from vistar.engine import registry

    here = "tests.test_bench_skip_chain"
    monkeypatch.setattr(registry, "FEATURES", {"fake_missing": f"{here}:MISSING", "fake_child": f"{here}:CHILD",
                                               "fake_grandchild": f"{here}:GRANDCHILD"})
    monkeypatch.setattr(registry, "METRICS", {"TR": f"{here}:METRIC"})
    items = [Item(np.zeros((8, 8, 3), np.uint8), parse_prompt('[GD|TR] a sign {text="HI"}', id="p"))]
    report = run_bench(items, batch_sizes=(1,), repeats=1)
    assert {s["name"]: s["status"] for s in report["stages"]} == {
        "fake_missing": "skipped", "fake_child": "skipped", "fake_grandchild": "skipped"}
    assert report["metrics"][0]["status"] == "skipped" and report["naive_vs_engine"] is None


def _raises(batch, ctx):
    raise RuntimeError("no kernel for Half on this device")


RAISES = FeatureStage(name="fake_raises", version="1", compute=_raises)
AFTER_RAISES = FeatureStage(name="fake_after", version="1", compute=lambda b, c: [1.0] * len(b), requires=("fake_raises",))
FINE = FeatureStage(name="fake_fine", version="1", compute=lambda b, c: [2.0] * len(b))
TWO = Metric(name="TR", angle="TR", version="1", features=("fake_after", "fake_fine"), fn=lambda f, c, p, pr: MetricResult.ok(1.0))


def test_a_stage_that_raises_is_an_error_row_and_the_rest_is_measured(monkeypatch):
    """One stage failing on the device (found rehearsing the GPU benchmark): its row says why, what needs it is
    skipped, the other stages keep their numbers, and the report is still written."""
    from vistar.engine import registry

    here = "tests.test_bench_skip_chain"
    monkeypatch.setattr(registry, "FEATURES", {"fake_raises": f"{here}:RAISES", "fake_after": f"{here}:AFTER_RAISES",
                                               "fake_fine": f"{here}:FINE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": f"{here}:TWO"})
    items = [Item(np.zeros((8, 8, 3), np.uint8), parse_prompt('[GD|TR] a sign {text="HI"}', id="p"))]
    stages = {s["name"]: s for s in run_bench(items, batch_sizes=(1,), repeats=1)["stages"]}
    assert (stages["fake_raises"]["status"], stages["fake_raises"]["note"]) == ("error", "RuntimeError: no kernel for Half on this device")
    assert stages["fake_after"]["status"] == "skipped"
    assert stages["fake_fine"]["status"] == "ok" and stages["fake_fine"]["images_per_s"] > 0
