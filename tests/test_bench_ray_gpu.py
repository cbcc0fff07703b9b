"""gpu_all.sh's `ray-gpu` step (benchmarks/bench_ray_gpu.py) checked on the CPU with `--dry-run`: the core suite
through the pool and through Ray's pools, the same rows from both, the report's fields, no GPU sampled."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("ray", reason="ray is not installed (pip install 'vistar[ray]')")
REPO = Path(__file__).resolve().parents[1]


@pytest.mark.ray
@pytest.mark.slow
def test_the_ray_gpu_step_runs_on_the_cpu_with_dry_run(tmp_path):
    done = subprocess.run([sys.executable, "benchmarks/bench_ray_gpu.py", "--dry-run", "--cpu-workers", "2",
                           "--json", str(tmp_path / "r.json")], cwd=REPO, capture_output=True, text=True, timeout=900,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "VISTAR_HOME": str(tmp_path / "home"),
                               "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["images"] == 8 and report["device"] == "cpu" and set(report["runs"]) == {"local", "ray"}
    local, ray = report["runs"]["local"], report["runs"]["ray"]
    assert local["rows"] == ray["rows"] and local["rows"].get("ok", 0) > 0   # both executors score the same rows
    assert local["gpu_busy"] is None and ray["gpu_busy"] is None             # nothing to sample on a CPU
    assert "| ray |" in done.stdout and "| local |" in done.stdout
