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


def test_mixed_workload_benches_each_stage_on_the_images_that_need_it(monkeypatch):
    from vistar.engine import registry

    fake_plugins.install(monkeypatch)
    monkeypatch.setattr(registry, "FEATURES", {**registry.FEATURES, "fake_missing": "tests.fake_plugins:MISSING_STAGE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.fake_plugins:METRIC_A", "LI": "tests.fake_plugins:METRIC_LI_MISSING"})
    lamp = parse_prompt('[PH|LI] a lamp {light="upper-left front"}', id="l")
    items = _items(2) + [Item(np.zeros((16, 16, 3), np.uint8), lamp)]
    report = run_bench(items, batch_sizes=(1,), repeats=1)
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["fake_brightness"]["status"] == "ok" and stages["fake_missing"]["status"] == "skipped"
    assert set(fake_plugins.CALLS) == {1, 2}  # warm-up on the 2 TR images, then one at a time: never the lamp
    metrics = {m["metric"]: m["status"] for m in report["metrics"]}
    assert metrics == {"TR": "ok", "LI": "skipped"}


def test_a_run_records_only_the_models_it_loaded(tmp_path, monkeypatch):
    from PIL import Image

    from vistar.engine.runner import ScoreConfig, run_score
    from vistar.models import provenance

    fake_plugins.install(monkeypatch)
    provenance.record_random("left-over-from-a-bench", seed=0, builder="x")
    (tmp_path / "img" / "m").mkdir(parents=True)
    Image.fromarray(np.full((16, 16, 3), 9, np.uint8)).save(tmp_path / "img" / "m" / "p.png")
    (tmp_path / "p.vistar").write_text('p: [GD|TR] a sign {text="HI"}\n')
    run_score(ScoreConfig(images=tmp_path / "img", prompts=tmp_path / "p.vistar", out=tmp_path / "run"))
    import json
    assert "left-over-from-a-bench" not in json.loads((tmp_path / "run" / "run.json").read_text())["models"]
