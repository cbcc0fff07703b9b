"""The end-to-end benchmark (benchmarks/bench_end_to_end.py), small, on the CPU: the core suite's CV angles through the
engine and through the naive loop, one row per (image, metric), what each side runs with, the steady window."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from vistar.api import RunOptions
from vistar.engine.bench_e2e import BusySampler, core_items, naive_features, run_e2e, steady_rate
from vistar.engine.runner import ScoreConfig, run_score
from vistar.ontology import Ontology
from vistar.suites.loader import load_suite

pytest.importorskip("torch")
pytest.importorskip("transformers")
CORE = load_suite("core").prompts


def test_core_items_take_the_angles_in_turn():
    items = core_items(CORE, 8, 64)
    assert [it.prompt.angle for it in items] == ["TR", "LI", "CSE", "CPA", "PSC", "GC", "TR", "LI"]
    assert items[0].prompt.id != items[6].prompt.id          # the next prompt of the angle, not the same one again
    assert all(it.image.shape == (64, 64, 3) for it in items)


def test_the_naive_loop_runs_fp32_with_the_host_processors():
    ontology = Ontology.load(None).data["features"]
    features = naive_features(ontology, ["panels", "subject_masks", "dino_embed", "depth", "ocr"])
    assert features["subject_masks"] == {**ontology["subject_masks"], "precision": "fp32", "preprocess": "host"}
    assert features["dino_embed"]["preprocess"] == "host" and features["depth"]["precision"] == "fp32"
    assert features["ocr"] == ontology["ocr"] and features["panels"] == ontology["panels"]   # no torch model there


def test_steady_window_and_busy_fraction():
    assert steady_rate(20, 4, [10.0, 11.0, 12.0, 13.0, 14.0]) == pytest.approx(16 / 4)
    assert steady_rate(4, 4, [10.0]) is None
    sampler = BusySampler("cpu")
    sampler.samples = [(0.5, 0.0), (1.0, 0.6), (2.0, 0.8), (3.5, 1.0)]
    assert sampler.fraction(1.0, 3.0) == pytest.approx(0.7) and sampler.fraction(5, 6) is None
    with BusySampler("cpu") as idle:   # no GPU: nothing sampled, nothing started
        pass
    assert idle.samples == []


def test_random_weights_only_in_a_benchmarks_run(tmp_path):
    images, prompts = tmp_path / "images", tmp_path / "p.vistar"
    (images / "m").mkdir(parents=True)
    prompts.write_text("p1: [PH|LI] three wooden blocks on a floor, low light from the left\n")
    with pytest.raises(ValueError, match="random_init"):
        run_score(ScoreConfig(images, prompts, tmp_path / "run", options=RunOptions(model_scale="tiny")))


@pytest.mark.slow
def test_end_to_end_small_on_the_cpu():
    items = core_items(CORE, 7, 128)
    report = run_e2e(items, device="cpu", batch=4, cpu_workers=1, model_scale="tiny")
    assert report["angles"] == ["CPA", "CSE", "GC", "LI", "PSC", "TR"] and report["images"] == 7
    assert sum(report["rows"].values()) == 7   # one metric per built-in angle: one row per image
    assert report["engine_ips"] == pytest.approx(7 / report["engine_s"]) and report["naive_ips"] > 0
    assert report["engine_steady_ips"] > 0 and report["gpu_busy"] is None
    assert report["speedup_end_to_end"] == pytest.approx(report["naive_s"] / report["engine_s"])
    assert report["speedup_steady"] == pytest.approx(report["engine_steady_ips"] / report["naive_ips"])


def test_the_naive_loop_skips_where_a_weight_is_missing(tmp_path, monkeypatch):
    """Without the expression model the faces stage gives its skip (a MissingWeightError value): the naive loop
    ends that chain as the engine does, rather than handing the skip to pose as if it were faces."""
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "no-weights"))
    items = [it for it in core_items(CORE, 12, 128) if it.prompt.angle == "CPA"]
    report = run_e2e(items, device="cpu", batch=4, cpu_workers=1, model_scale="tiny")
    assert report["images"] == len(items) and report["naive_ips"] > 0
    assert report["rows"].get("skipped", 0) >= 1   # a CPA prompt asking for an expression: skipped, naming the weight


def test_a_cuda_report_prints_the_gpu_busy_share(monkeypatch, capsys):
    """The lines only a GPU run fills (GPU busy, a steady rate): printed from a hand-made report of that run."""
    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    monkeypatch.syspath_prepend(str(benchmarks))
    spec = importlib.util.spec_from_file_location("bench_end_to_end_script", benchmarks / "bench_end_to_end.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    report = {"images": 6, "angles": ["CSE", "TR"], "device": "cuda", "batch": 2, "cpu_workers": 4, "executor": "local",
              "model_scale": "full", "engine_s": 3.0, "engine_ips": 2.0, "engine_steady_ips": 4.0, "gpu_busy": 0.734,
              "rows": {"ok": 6}, "naive_s": 6.0, "naive_ips": 1.0, "speedup_end_to_end": 2.0, "speedup_steady": 4.0}
    monkeypatch.setattr(bench, "device_of", lambda parser, args: "cuda")
    monkeypatch.setattr(bench, "run_e2e", lambda items, **kw: report)
    monkeypatch.setattr(sys, "argv", ["bench_end_to_end.py", "--device", "cuda", "--n", "2", "--size", "32"])
    bench.main()
    out = capsys.readouterr().out
    assert "steady 4.00 img/s, GPU busy 73% (steady" in out and "speed-up: 4.00x steady, 2.00x end to end" in out
