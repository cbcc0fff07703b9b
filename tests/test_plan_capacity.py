"""benchmarks/plan_capacity.py: hours and cores from bench numbers, checked against hand arithmetic."""
import importlib.util
import json
from pathlib import Path

import pytest

from vistar.prompts_dsl import parse_prompt

SPEC = importlib.util.spec_from_file_location("plan_capacity", Path(__file__).parents[1] / "benchmarks" / "plan_capacity.py")
plan_capacity = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(plan_capacity)


def _bench(path: Path, device: str, stages: dict, metrics: dict) -> Path:
    path.write_text(json.dumps({"fingerprint": {"device": device},
                                "stages": [{"name": n, "status": "ok", "throughput": t} for n, t in stages.items()],
                                "metrics": [{"metric": m, "status": "ok", "p50_ms": ms} for m, ms in metrics.items()]}))
    return path


def test_hours_cores_and_gpus_by_hand(tmp_path):
    # 3 TR prompts and 1 GC prompt: ocr on 3/4 of the images, thumbnail/depth/padim on 1/4
    prompts = [parse_prompt(f'[GD|TR] A sign that says "HI {i}"', id=f"t{i}") for i in range(3)]
    prompts.append(parse_prompt("[GA|GC] a stone archway", id="g"))
    cpu = _bench(tmp_path / "cpu.json", "cpu", {"ocr": {"1": 5.0, "4": 10.0}, "thumbnail": {"1": 1000.0},
                                                "padim": {"1": 100.0}}, {"TR": 100.0, "GC": 20.0})
    gpu = _bench(tmp_path / "gpu.json", "cuda", {"depth": {"8": 50.0}}, {})
    result = plan_capacity.plan(36_000, prompts, [cpu, gpu], [], decode_ms=20.0)
    hours = {r["stage"]: r["hours"] for r in result["rows"]}
    assert hours["ocr"] == pytest.approx(0.75 * 36_000 / 10 / 3600)          # 0.75 h at the best batch
    assert hours["depth"] == pytest.approx(0.25 * 36_000 / 50 / 3600)        # 0.05 GPU-h
    assert hours["metrics"] == pytest.approx((0.75 * 0.1 + 0.25 * 0.02) * 36_000 / 3600)
    assert hours["decode"] == pytest.approx(36_000 * 0.02 / 3600)
    assert result["gpu_h"] == pytest.approx(0.05)
    assert result["cpu_h"] == pytest.approx(0.75 + 0.25 * 36 / 3600 + 0.25 * 360 / 3600 + 0.8 + 0.2)
    assert result["missing"] == []


def test_unmeasured_stage_is_listed_until_assumed(tmp_path):
    prompts = [parse_prompt("[GA|GC] a stone archway", id="g")]
    cpu = _bench(tmp_path / "cpu.json", "cpu", {"thumbnail": {"1": 1000.0}, "padim": {"1": 100.0}}, {})
    assert plan_capacity.plan(10, prompts, [cpu], [], 0.0)["missing"] == ["depth"]
    result = plan_capacity.plan(3600, prompts, [cpu], ["depth=2@gpu"], 0.0)
    depth = next(r for r in result["rows"] if r["stage"] == "depth")
    assert depth["source"] == "assumed" and depth["hours"] == pytest.approx(0.5) and result["gpu_h"] == pytest.approx(0.5)
