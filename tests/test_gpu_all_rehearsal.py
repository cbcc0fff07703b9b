"""benchmarks/gpu_all.sh itself, so that its one run on a lent GPU is not lost to a bug of the script or of a bench's
arguments: the full-scale commands are the ones benchmarks/README.md documents (checked with stub programs, nothing
runs), and the throughput block's same steps run for real on the CPU at tiny scale, every JSON with the fields
docs/performance.md quotes."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "gpu_all.sh"
SUMMARY = re.compile(r"^(\S+)\s+rc=(\d+)\s+(\d+)s  (.*)$")
THROUGHPUT = ["throughput-stages", "throughput-precision", "throughput-ocr", "throughput-e2e"]
TORCH_STAGES = {"clip_embed", "dino_embed", "depth", "instances", "subject_masks"}


def _gpu_all(out: Path, env: dict[str, str], timeout: float) -> tuple[subprocess.CompletedProcess, dict[str, tuple[int, str]]]:
    """Run the script into OUT; (the process, step -> (exit code, command) from its summary)."""
    done = subprocess.run(["bash", str(SCRIPT), str(out)], cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(out.parent), **env})
    steps = {}
    for line in (out / "summary.txt").read_text().splitlines() if (out / "summary.txt").exists() else []:
        m = SUMMARY.match(line)
        assert m, line
        steps[m[1]] = (int(m[2]), m[4])
    return done, steps


def _stubs(tmp_path: Path) -> Path:
    """`vistar` and a python that do nothing: the script's commands are recorded, not run."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("vistar", "python"):
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def test_the_gpu_commands_are_the_documented_ones(tmp_path):
    """DEVICE and SCALE unset: the throughput steps run exactly the commands benchmarks/README.md lists for a GPU."""
    bin_dir, out = _stubs(tmp_path), tmp_path / "out"
    done, steps = _gpu_all(out, {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHON": "python", "STEPS": "env throughput"}, 60)
    assert done.returncode == 0, done.stderr
    assert list(steps) == ["env", *THROUGHPUT] and all(rc == 0 for rc, _ in steps.values())
    assert steps["env"][1].endswith(" cuda")   # the env step names the device it was given
    documented = (REPO / "benchmarks" / "README.md").read_text().splitlines()
    for name in THROUGHPUT:
        command = steps[name][1].replace(f"{out}/", "")
        assert f"    {command}" in documented, command


def test_a_bad_scale_stops_before_any_step(tmp_path):
    bin_dir, out = _stubs(tmp_path), tmp_path / "out"
    done, steps = _gpu_all(out, {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHON": "python", "SCALE": "small"}, 60)
    assert done.returncode == 2 and "SCALE must be full or tiny, not 'small'" in done.stderr
    assert steps == {} and not out.exists()


@pytest.mark.slow
def test_the_throughput_block_rehearses_on_the_cpu(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    out = tmp_path / "out"
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHON": sys.executable, "PYTHONPATH": str(REPO),
           "STEPS": "env throughput", "DEVICE": "cpu", "SCALE": "tiny", "VISTAR_HOME": str(tmp_path / "home"),
           "OMP_NUM_THREADS": "1"}   # torch's threads fighting other jobs on a small machine cost more than they give
    done, steps = _gpu_all(out, env, 1500)
    logs = {name: (out / f"{name}.log").read_text()[-3000:] for name in steps}
    assert list(steps) == ["env", *THROUGHPUT], done.stdout + done.stderr
    assert all(rc == 0 for rc, _ in steps.values()), logs
    assert "cpu: " in logs["env"] and "cpus " in logs["env"]

    stages = {s["name"]: s for s in json.loads((out / "throughput-stages.json").read_text())["stages"]}
    assert TORCH_STAGES <= set(stages)
    for name in TORCH_STAGES:   # the columns of docs/performance.md's stage-against-model table
        s = stages[name]
        assert s["status"] == "ok" and s["images_per_s"] > 0 and s["model_images_per_s"] > 0, s
        assert s["model_ratio"] == pytest.approx(s["images_per_s"] / s["model_images_per_s"]) and s["host_ms_per_image"] >= 0

    precision = json.loads((out / "throughput-precision.json").read_text())
    assert precision["device"] == "cpu" and precision["cuda_defaults"] is None   # the rule is for a CUDA run only
    rows = {(r["stage"], r["precision"]): r for r in precision["rows"]}
    assert set(rows) == {(s, p) for s in TORCH_STAGES for p in ("fp32", "tf32", "bf16", "fp16")}
    for (stage, p), r in rows.items():
        assert r["images_per_s"] > 0 and r["model_images_per_s"] > 0 and r["effect"], (stage, p)
        if p in ("fp32", "tf32"):   # a CPU runs TF32 as fp32: no score may move
            assert all(e["max_abs_delta"] in (None, 0.0) for e in r["effect"].values()), r

    ocr = json.loads((out / "throughput-ocr.json").read_text())
    assert set(ocr["providers"]) == {"cpu"} and ocr["cuda_vs_cpu"] is None
    assert "device is cpu" in ocr["cuda_not_run"]   # why the CUDA row is absent
    assert ocr["providers"]["cpu"]["images_per_s"] > 0 and len(ocr["providers"]["cpu"]["tr"]) == ocr["images"] == 3

    e2e = json.loads((out / "throughput-e2e.json").read_text())
    assert e2e["images"] == 6 and e2e["angles"] == ["CPA", "CSE", "GC", "LI", "PSC", "TR"] and e2e["cpu_workers"] == 2
    assert sum(e2e["rows"].values()) == 6 and e2e["gpu_busy"] is None
    assert e2e["engine_ips"] == pytest.approx(6 / e2e["engine_s"]) and e2e["naive_ips"] > 0 and e2e["engine_steady_ips"] > 0
    assert e2e["speedup_steady"] == pytest.approx(e2e["engine_steady_ips"] / e2e["naive_ips"])
