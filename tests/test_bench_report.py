"""`vistar bench` measures what it claims: the naive loop decodes and recomputes features per metric; the engine
figure is a real `run_score` over the same files, reusing the bench's loaded models, and its rows are real."""
import numpy as np
import pytest
from PIL import Image

from tests.support import fake_plugins
from vistar.api import StageContext
from vistar.engine import bench, prefetch
from vistar.engine.bench import Item, engine_end_to_end, naive_seconds, run_bench
from vistar.engine.bench_inputs import load_items, write_workload
from vistar.engine.store import read_scores
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt


def _items(n):
    prompt = parse_prompt('[GD|TR] a sign {text="HI"}', id="p")
    return [Item(np.full((16, 16, 3), 10 * i, np.uint8), prompt) for i in range(n)]


def _ctx():
    """A context as `run_bench` builds it: stage parameters from the ontology the timed run loads."""
    return StageContext(features=Ontology.load().data.get("features") or {})


def _count_decodes(monkeypatch, module) -> list:
    decoded = []
    real = module.load_rgb

    def counting(path, *args):
        decoded.append(path)
        return real(path, *args)
    monkeypatch.setattr(module, "load_rgb", counting)
    return decoded


def test_naive_loop_decodes_and_recomputes_per_metric_the_engine_shares(tmp_path, monkeypatch):
    fake_plugins.install(monkeypatch)
    naive_decodes, engine_decodes = _count_decodes(monkeypatch, bench), _count_decodes(monkeypatch, prefetch)
    items, ctx = _items(4), _ctx()
    work = write_workload(items, tmp_path)
    assert [p.name for p in work.paths] == ["p_0.png", "p_1.png", "p_2.png", "p_3.png"]
    assert work.manifest.read_text().splitlines()[:2] == ["image,prompt_id,model,sample", "synthetic/p_0.png,p,synthetic,0"]
    naive_seconds(items, work.paths, ctx, Ontology.load())
    assert fake_plugins.CALLS == [1] * 8 and len(naive_decodes) == 8   # 4 images x 2 metrics, each decoding alone
    fake_plugins.CALLS.clear()
    seconds, rows = engine_end_to_end(work, tmp_path / "run", ctx, None, batch=2)
    assert seconds > 0 and fake_plugins.CALLS == [2, 2]   # shared by both metrics, batched
    assert sorted(engine_decodes) == sorted(work.paths)   # the engine decodes each file once
    assert rows == {"ok": 8}
    scores = read_scores(tmp_path / "run").set_index(["sample", "metric"])["score"]
    for k, it in enumerate(items):   # real scores of the PNG pixels, which are the synthetic pixels exactly
        assert scores[(k, "TR")] == pytest.approx(it.image.mean() / 255)
        assert scores[(k, "TR.dark")] == pytest.approx(1 - it.image.mean() / 255)


def test_the_timed_run_reuses_the_warm_context(tmp_path, monkeypatch):
    from vistar.engine.executors import local

    fake_plugins.install(monkeypatch)
    work, ctx = write_workload(_items(2), tmp_path), _ctx()
    used = []
    real = local.score_batch
    monkeypatch.setattr(local, "score_batch", lambda b, i, c, o, **kw: used.append(c) or real(b, i, c, o, **kw))
    engine_end_to_end(work, tmp_path / "run", ctx, None, batch=2)
    assert used == [ctx]   # the bench's context, models already in its cache: loading is not timed


def test_a_warm_context_from_another_ontology_is_refused(tmp_path, monkeypatch):
    fake_plugins.install(monkeypatch)
    work = write_workload(_items(1), tmp_path)
    with pytest.raises(ValueError, match="other stage parameters"):   # its models would not be the run's
        engine_end_to_end(work, tmp_path / "run", StageContext(features={"ocr": {"rec_batch_size": 1}}), None, batch=1)


def test_report_compares_naive_with_the_end_to_end_run(monkeypatch):
    fake_plugins.install(monkeypatch)
    report = run_bench(_items(3), batch_sizes=(1, 3), repeats=1)
    (stage,) = report["stages"]
    assert stage["name"] == "fake_brightness" and stage["status"] == "ok"
    assert set(stage["throughput"]) == {1, 3} and stage["best_batch"] in (1, 3)
    assert stage["p50_ms"] <= stage["p95_ms"]
    assert stage["flops_per_image"] is None  # numpy stage: no torch FLOPs to count
    assert {m["metric"] for m in report["metrics"]} == {"TR", "TR.dark"}
    cmp_ = report["naive_vs_engine"]
    assert cmp_["images"] == 3 and cmp_["rows"] == {"ok": 6} and cmp_["engine_batch"] == stage["best_batch"]
    assert cmp_["speedup"] == pytest.approx(cmp_["naive_s"] / cmp_["engine_end_to_end_s"])
    assert cmp_["stage_calls"] == {"naive": 6, "engine": 3}   # both metrics recompute the stage alone; the engine shares it
    assert report["fingerprint"]["versions"]["python"]


def test_mixed_workload_benches_each_stage_on_the_images_that_need_it(monkeypatch):
    from vistar.engine import registry

    fake_plugins.install(monkeypatch)
    monkeypatch.setattr(registry, "FEATURES", {**registry.FEATURES, "fake_missing": "tests.support.fake_plugins:MISSING_STAGE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.support.fake_plugins:METRIC_A", "LI": "tests.support.fake_plugins:METRIC_LI_MISSING"})
    lamp = parse_prompt('[PH|LI] a lamp {light="upper-left front"}', id="l")
    items = _items(2) + [Item(np.zeros((16, 16, 3), np.uint8), lamp)]
    report = run_bench(items, batch_sizes=(1,), repeats=1)
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["fake_brightness"]["status"] == "ok" and stages["fake_missing"]["status"] == "skipped"
    assert set(fake_plugins.CALLS) == {1}  # warm-up on one TR image, then one at a time: never the lamp (a 2)
    metrics = {m["metric"]: m["status"] for m in report["metrics"]}
    assert metrics == {"TR": "ok", "LI": "skipped"}


def test_synthetic_images_of_prompts_p_and_p_0_are_scored_as_their_own_prompts(tmp_path, monkeypatch):
    """`p_0.png` is prompt p's sample 0, not prompt `p_0`: the workload's manifest says so, so the timed run
    writes one row per (image, metric) although the two prompts have different angles."""
    from vistar.api import Metric, MetricResult
    from vistar.engine import registry

    fake_plugins.install(monkeypatch)
    monkeypatch.setattr(fake_plugins, "METRIC_LI", Metric(name="LI", angle="LI", version="1", features=("fake_brightness",),
                                                          fn=lambda f, c, p, pr: MetricResult.ok(f["fake_brightness"])),
                        raising=False)
    monkeypatch.setattr(registry, "METRICS", {**registry.METRICS, "LI": "tests.support.fake_plugins:METRIC_LI"})
    lamp = parse_prompt('[PH|LI] a lamp {light="upper-left front"}', id="p")
    sign = parse_prompt('[GD|TR] a sign {text="HI"}', id="p_0")
    items = [Item(np.full((16, 16, 3), 200, np.uint8), lamp), Item(np.full((16, 16, 3), 40, np.uint8), sign)]
    work = write_workload(items, tmp_path)
    assert [p.name for p in work.paths] == ["p_0.png", "p_0_0.png"]
    report = run_bench(items, batch_sizes=(1,), repeats=1)
    assert report["naive_vs_engine"]["rows"] == {"ok": 3}   # LI on p, TR and TR.dark on p_0
    _, rows = engine_end_to_end(work, tmp_path / "run", _ctx(), None, batch=2)
    scores = read_scores(tmp_path / "run").set_index(["prompt_id", "metric"])["score"]
    assert rows == {"ok": 3} and scores[("p", "LI")] == pytest.approx(200 / 255)
    assert scores[("p_0", "TR")] == pytest.approx(40 / 255)


def test_bench_cli_names_a_failed_run_without_a_traceback(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from vistar.cli import app

    def broken(*args, **kwargs):
        raise RuntimeError("the timed run wrote 2 rows, not one per (image, metric) = 3")
    monkeypatch.setattr(bench, "run_bench", broken)
    (tmp_path / "p.vistar").write_text('p: [GD|TR] a sign {text="HI"}\n')
    result = CliRunner().invoke(app, ["bench", "--prompts", str(tmp_path / "p.vistar"), "--n", "1", "--size", "32"],
                                terminal_width=200)
    assert result.exit_code == 2, result.output
    assert "error: the benchmark stopped: the timed run wrote 2 rows" in result.output
    assert "Traceback" not in result.output


def test_real_images_are_used_where_they_lie(tmp_path, monkeypatch):
    fake_plugins.install(monkeypatch)
    for model, pid in [("a", "p"), ("a", "p_1"), ("b", "p")]:
        (tmp_path / "img" / model).mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.full((16, 16, 3), 40, np.uint8)).save(tmp_path / "img" / model / f"{pid}.jpg")
    (tmp_path / "p.vistar").write_text('p: [GD|TR] a sign {text="HI"}\n')
    items = load_items(tmp_path / "p.vistar", tmp_path / "img", n=2, size=32)
    (tmp_path / "work").mkdir()
    work = write_workload(items, tmp_path / "work")
    assert work.images == (tmp_path / "img").resolve() and work.paths == [it.record.path for it in items]
    _, rows = engine_end_to_end(work, tmp_path / "run", _ctx(), None, batch=2)
    assert rows == {"ok": 4}   # only the first two files (a/p.jpg, a/p_1.jpg), not b/p.jpg
    assert set(read_scores(tmp_path / "run")["image"]) == {"a/p.jpg", "a/p_1.jpg"}
    assert not (tmp_path / "work" / "images").exists()   # nothing copied


def test_a_run_records_only_the_models_it_loaded(tmp_path, monkeypatch):
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
