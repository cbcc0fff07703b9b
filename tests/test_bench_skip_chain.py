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
