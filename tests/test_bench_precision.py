"""The precision benchmark (vistar/engine/bench_precision.py): the effect measures, the rule that picks a CUDA
default, and a small CPU run where TF32, which a CPU runs as fp32, must show no effect at all."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from vistar.engine.bench_e2e import core_items
from vistar.engine.bench_inputs import Item
from vistar.engine.bench_precision import TOLERANCE, PrecisionRow, choose, effect, measure
from vistar.prompts_dsl import parse_prompt
from vistar.suites.loader import load_suite


def _items(angles):
    return [Item(None, parse_prompt(f"[SA|{a}] a scene")) for a in angles]


def test_effect_per_angle_hand_computed():
    items = _items(["PSC", "PSC", "PSC", "GC", "GC"])
    base = {(0, "PSC"): 0.1, (1, "PSC"): 0.5, (2, "PSC"): 0.9, (3, "GC"): 0.2, (4, "GC"): None}
    other = {(0, "PSC"): 0.6, (1, "PSC"): 0.5, (2, "PSC"): 0.95, (3, "GC"): 0.2, (4, "GC"): 0.7}
    out = effect(items, base, other, {"PSC", "GC"})
    # PSC: |d| = 0.5, 0, 0.05; order (0.1, 0.5, 0.9) -> (0.6, 0.5, 0.95): pairs (0,1) discordant, (0,2) and (1,2) concordant
    assert out["PSC"] == {"n": 3, "lost": 0, "max_abs_delta": pytest.approx(0.5), "kendall_tau": pytest.approx(1 / 3)}
    # one image compared: tau undefined (None, as for any list under two); the image fp32 left unscored is not lost
    assert out["GC"] == {"n": 1, "lost": 0, "max_abs_delta": 0.0, "kendall_tau": None}
    assert out["PSC"]["lost"] == 0


def test_a_precision_that_loses_images_is_outside_the_tolerance():
    """Unscored images are left out of Δ and τ, so they must count against the setting: with none left to compare,
    nothing would move and fp16 would be chosen while scoring nothing."""
    items = _items(["PSC", "PSC", "PSC", "GC", "GC"])
    base = {(0, "PSC"): 0.1, (1, "PSC"): 0.5, (2, "PSC"): 0.9, (3, "GC"): 0.2, (4, "GC"): 0.4}
    none_left = effect(items, base, {k: None for k in base}, {"PSC", "GC"})
    assert none_left["PSC"] == {"n": 0, "lost": 3, "max_abs_delta": None, "kendall_tau": None}
    half = effect(items, base, {**base, (1, "PSC"): None, (4, "GC"): None}, {"PSC", "GC"})
    assert half["PSC"] == {"n": 2, "lost": 1, "max_abs_delta": 0.0, "kendall_tau": 1.0}
    assert half["GC"] == {"n": 1, "lost": 1, "max_abs_delta": 0.0, "kendall_tau": None}
    rows = [PrecisionRow("depth", "fp32", 10, 11, effect(items, base, base, {"PSC", "GC"})),
            PrecisionRow("depth", "bf16", 20, 21, half), PrecisionRow("depth", "fp16", 40, 41, none_left)]
    assert [r.inside() for r in rows] == [True, False, False]
    assert choose(rows) == {}   # only fp32 keeps every image


def test_the_rule_takes_the_fastest_setting_inside_the_tolerance():
    close = {"PSC": {"n": 9, "lost": 0, "max_abs_delta": TOLERANCE["max_abs_delta"] / 2, "kendall_tau": 0.999}}
    far = {"PSC": {"n": 9, "lost": 0, "max_abs_delta": 0.2, "kendall_tau": 0.999}}
    rows = [PrecisionRow("depth", "fp32", 10, 11, {}), PrecisionRow("depth", "tf32", 20, 21, close),
            PrecisionRow("depth", "bf16", 40, 41, far),   # fastest, but moves scores: not chosen
            PrecisionRow("clip_embed", "fp32", 50, 60, {}), PrecisionRow("clip_embed", "bf16", 45, 70, close)]
    assert choose(rows) == {"depth": "tf32"}   # clip_embed: nothing faster than fp32, so no entry (fp32)


def test_a_precision_that_raises_is_a_row_saying_why(monkeypatch):
    """On a GPU an autocast dtype may meet an op without a kernel for it: that (stage, precision) becomes a row naming
    the error, every other setting is still measured, and the rule passes over the row."""
    from vistar.engine import bench_precision
    from vistar.engine.bench import StageReport

    def compute(names, items, feats, ctx, ontology, timed, batch):   # the stage pass, without the models
        p = ctx.features[timed]["precision"] if timed else "fp32"
        if p == "fp16":
            raise RuntimeError("expected scalar type Half but found Float")
        return StageReport(timed, images_per_s={"fp32": 10.0, "bf16": 30.0}[p], model_images_per_s=40.0) if timed else None

    monkeypatch.setattr(bench_precision, "_compute", compute)
    monkeypatch.setattr(bench_precision, "_scores", lambda items, feats, ontology: {})
    rows = measure(core_items(load_suite("core").prompts, 6, 32), device="cuda", precisions=("fp32", "bf16", "fp16"))
    stages = list(dict.fromkeys(r.stage for r in rows))
    assert {"clip_embed", "subject_masks", "dino_embed", "instances", "depth"} <= set(stages)
    assert [(r.stage, r.precision) for r in rows] == [(s, p) for s in stages for p in ("fp32", "bf16", "fp16")]
    for r in rows:
        if r.precision == "fp16":
            assert (r.images_per_s, r.effect, r.error) == (None, {}, "RuntimeError: expected scalar type Half but found Float")
        else:
            assert r.images_per_s in (10.0, 30.0) and r.error is None and r.effect
    assert choose(rows) == {s: "bf16" for s in stages}


@pytest.mark.slow
def test_a_small_cpu_run_shows_tf32_as_fp32():
    pytest.importorskip("transformers")
    rows = measure(core_items(load_suite("core").prompts, 4, 96), device="cpu", precisions=("fp32", "tf32"), batch=2, model_scale="tiny")
    stages = {r.stage for r in rows}
    assert {"clip_embed", "subject_masks", "dino_embed", "instances"} <= stages
    for r in rows:
        assert r.images_per_s > 0 and r.model_images_per_s > 0
        assert r.effect, r.stage   # the angles the stage feeds
        for e in r.effect.values():
            assert e["max_abs_delta"] in (None, 0.0) and e["kendall_tau"] in (None, 1.0) and e["lost"] == 0
    assert {a for r in rows if r.stage == "clip_embed" for a in r.effect} == {"CSE"}


def test_a_cuda_run_prints_and_writes_the_defaults_it_chose(monkeypatch, tmp_path, capsys):
    """What only a CUDA run reaches in benchmarks/bench_precision.py: the rule applied, its choice printed and written,
    a row that could not be measured saying why (the measurement itself is replaced by hand-made rows)."""
    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    monkeypatch.syspath_prepend(str(benchmarks))
    spec = importlib.util.spec_from_file_location("bench_precision_script", benchmarks / "bench_precision.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    close = {"PSC": {"n": 2, "lost": 0, "max_abs_delta": 0.001, "kendall_tau": 1.0}}
    lossy = {"PSC": {"n": 1, "lost": 1, "max_abs_delta": 0.0, "kendall_tau": None}}
    rows = [PrecisionRow("depth", "fp32", 10.0, 11.0, close), PrecisionRow("depth", "bf16", 25.0, 30.0, close),
            PrecisionRow("depth", "tf32", 40.0, 41.0, lossy),   # fastest, but scores one image fewer: not chosen
            PrecisionRow("depth", "fp16", None, None, error="RuntimeError: no kernel")]
    monkeypatch.setattr(bench, "device_of", lambda parser, args: "cuda")
    monkeypatch.setattr(bench, "measure", lambda items, **kw: rows)
    monkeypatch.setattr(sys, "argv", ["bench_precision.py", "--device", "cuda", "--n", "1", "--size", "32",
                                      "--json", str(tmp_path / "p.json")])
    bench.main()
    out = capsys.readouterr().out
    assert "CUDA_DEFAULTS = {'depth': 'bf16'}" in out and "2.50x" in out and "not measured: RuntimeError: no kernel" in out
    assert "PSC 0.0 - (1, lost 1)  OUTSIDE tolerance" in out
    report = json.loads((tmp_path / "p.json").read_text())
    assert report["device"] == "cuda" and report["cuda_defaults"] == {"depth": "bf16"}
    assert [r["error"] for r in report["rows"]] == [None, None, None, "RuntimeError: no kernel"]
