"""Both executors on a GPU: with `--device cuda` the Ray executor's torch stages run on GPU actors (a fractional
GPU each) and write exactly the rows of the one-process run on the same batches, as on CPU (test_executors.py).
CUDA stages are deterministic (docs/engine.md, "Determinism"), so equality is exact, not a tolerance."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.support.executor_helpers import build_workload, score_table

pytestmark = [pytest.mark.gpu, pytest.mark.ray]


def test_ray_cuda_run_equals_the_one_process_cuda_run(tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'vistar[ray]')")
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "empty-home"))  # only the weights the workload names
    workload = build_workload(tmp_path / "workload")
    local = score_table(workload, tmp_path / "local", device="cuda", cpu_workers=1)
    on_ray = score_table(workload, tmp_path / "ray", device="cuda", executor="ray", cpu_workers=2)
    pd.testing.assert_frame_equal(on_ray, local)
    run = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert run["executor"]["name"] == "ray"
    assert run["stage_devices"]["depth"] == "cuda" and run["stage_devices"]["ocr"] == "cpu"
    assert (local["status"] == "ok").sum() >= 6  # TR, LI, GC and CSE rows scored, not only errors
