"""benchmarks/bench_ocr_provider.py (gpu_all.sh's throughput-ocr step) on the CPU: the CPU provider's row, the CUDA
row absent with the reason, and the CUDA-against-CPU comparison a GPU run prints, reached here by letting the bench
believe the CUDA provider exists (the OCR stage then says it ran on the CPU, so both rows must agree exactly)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))   # the bench imports its sibling device_args
    spec = importlib.util.spec_from_file_location("bench_ocr_provider", BENCHMARKS / "bench_ocr_provider.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(bench, monkeypatch, tmp_path) -> dict:
    out = tmp_path / "ocr.json"
    monkeypatch.setattr(sys, "argv", ["bench_ocr_provider.py", "--device", "cpu", "--n", "1", "--batch", "2", "--json", str(out)])
    bench.main()
    return json.loads(out.read_text())


def test_compare_image_by_image(bench):
    rows = {"cpu": {"tr": np.array([1.0, 0.5, 0.2]), "ips": 2.0}, "cuda": {"tr": np.array([1.0, 0.45, 0.2]), "ips": 8.0}}
    assert bench.compare(rows) == {"max_abs_dtr": pytest.approx(0.05), "equal_share": pytest.approx(2 / 3), "speedup": 4.0}
    assert bench.compare({"cpu": rows["cpu"]}) is None


def test_a_failing_cuda_provider_leaves_the_cpu_row(bench, monkeypatch, tmp_path, capsys):
    """The CUDA provider listed but failing when it runs (a cuDNN its build expects, missing): the CPU row stands."""
    def run(provider, device, images, texts, batch):
        if provider == "cuda":
            raise RuntimeError("CUDNN_STATUS_NOT_INITIALIZED")
        return {"ips": 2.0, "tr": np.linspace(1.0, 0.5, len(images)), "ran_on": "cpu"}

    monkeypatch.setattr(bench, "onnxruntime_provider", lambda requested, device: ("CUDAExecutionProvider", None))
    monkeypatch.setattr(bench, "run", run)
    report = _run(bench, monkeypatch, tmp_path)
    assert set(report["providers"]) == {"cpu"} and report["providers"]["cpu"]["tr"] == [1.0, 0.75, 0.5]
    assert report["cuda_not_run"] == "failed: RuntimeError: CUDNN_STATUS_NOT_INITIALIZED" and report["cuda_vs_cpu"] is None
    assert "provider cuda: not run (failed: RuntimeError: CUDNN_STATUS_NOT_INITIALIZED)" in capsys.readouterr().out


@pytest.mark.slow
def test_the_cpu_row_and_why_cuda_is_absent(bench, monkeypatch, tmp_path, capsys):
    report = _run(bench, monkeypatch, tmp_path)
    assert report["device"] == "cpu" and report["images"] == 3 and report["kinds"] == ["correct", "typo", "missing"]
    assert set(report["providers"]) == {"cpu"} and report["cuda_vs_cpu"] is None
    assert "device is cpu" in report["cuda_not_run"]
    assert f"provider cuda: not run ({report['cuda_not_run']})" in capsys.readouterr().out
    cpu = report["providers"]["cpu"]
    assert cpu["ran_on"] == "cpu" and cpu["images_per_s"] > 0 and cpu["mean_tr"] == pytest.approx(np.mean(cpu["tr"]))
    correct, typo, missing = cpu["tr"]   # each TR is its own poster's: the correct one read best, the missing word worst
    assert correct > typo > missing


@pytest.mark.slow
def test_both_providers_are_compared_when_cuda_is_there(bench, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bench, "onnxruntime_provider", lambda requested, device: ("CUDAExecutionProvider", None))
    report = _run(bench, monkeypatch, tmp_path)
    assert set(report["providers"]) == {"cpu", "cuda"} and report["cuda_not_run"] is None
    assert report["providers"]["cuda"]["ran_on"] == "cpu"   # the stage reports where it really ran
    assert report["providers"]["cuda"]["tr"] == report["providers"]["cpu"]["tr"]
    both = report["cuda_vs_cpu"]
    assert both["max_abs_dtr"] == 0.0 and both["equal_share"] == 1.0
    assert both["speedup"] == pytest.approx(report["providers"]["cuda"]["images_per_s"] / report["providers"]["cpu"]["images_per_s"])
    assert "cuda vs cpu: largest |dTR| 0.0000, equal TR on 100.0% of images" in capsys.readouterr().out
