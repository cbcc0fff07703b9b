"""`vistar bench` measures what it claims: the naive loop recomputes features per metric, the engine shares them."""
import numpy as np

from tests import fake_plugins
from vistar.engine.bench import Item, engine_seconds, naive_seconds, run_bench
from vistar.engine.registry import StageContext
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt


def _items(n):
    prompt = parse_prompt('[GD|TR] a sign {text="HI"}', id="p")
    return [Item(np.full((16, 16, 3), 10 * i, np.uint8), prompt) for i in range(n)]


def test_naive_loop_recomputes_features_per_metric(monkeypatch):
    fake_plugins.install(monkeypatch)
    onto, ctx = Ontology.load(), StageContext()
    naive_seconds(_items(4), ctx, onto)
    assert fake_plugins.CALLS == [1] * 8  # 4 images x 2 metrics, one image per call
    fake_plugins.CALLS.clear()
    engine_seconds(_items(4), ctx, onto, batch=2)
    assert fake_plugins.CALLS == [2, 2]  # shared across both metrics, batched


def test_report_has_every_stage_and_metric(monkeypatch):
    fake_plugins.install(monkeypatch)
    report = run_bench(_items(3), batch_sizes=(1, 3), repeats=1)
    (stage,) = report["stages"]
    assert stage["name"] == "fake_brightness" and stage["status"] == "ok"
    assert set(stage["throughput"]) == {1, 3} and stage["best_batch"] in (1, 3)
    assert stage["p50_ms"] <= stage["p95_ms"]
    assert stage["flops_per_image"] is None  # numpy stage: no torch FLOPs to count
    assert {m["metric"] for m in report["metrics"]} == {"TR", "TR.dark"}
    assert report["naive_vs_engine"]["images"] == 3 and report["naive_vs_engine"]["speedup"] > 0
    assert report["fingerprint"]["versions"]["python"]
