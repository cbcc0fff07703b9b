"""A run's own Ray instance is quiet and ends with the run: a healthy `vistar score --executor ray` prints none of
Ray's lines on the terminal (they are in RUN/ray.log), and a `kill -9` of the driver leaves no process of the
instance it started behind for more than a few seconds (Ray's own agents otherwise live 30-60 s more); its actors
run at the run's niceness."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.support.live_cli import scene, start_cli, wait_for
from tests.support.processes import alive, descendants

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'vistar[ray]')")
pytestmark = [pytest.mark.ray, pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")]


def _cmdline(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def test_a_healthy_ray_run_prints_nothing_of_rays(tmp_path):
    scene(tmp_path, n=4)
    run = tmp_path / "run"
    proc = start_cli(tmp_path, run, "--executor", "ray", "--cpu-workers", "2", sleep=0.0)
    _, err = proc.communicate(timeout=300)
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete", err.decode()
    paid = meta["executor"]["startup_seconds"]   # the instance's start, reported apart, inside the wait for the first batch
    assert 0 < paid["ray_start_s"] <= paid["first_batch_s"]
    noise = [line for line in err.decode().splitlines() if "WARNING" in line or "core_worker" in line or "ray" in line.lower()]
    assert noise == []
    assert "Started a local Ray instance" in (run / "ray.log").read_text()   # Ray's own line, in the run folder


def test_a_sigkilled_driver_takes_its_ray_instance_with_it(tmp_path):
    scene(tmp_path)
    proc = start_cli(tmp_path, tmp_path / "run", "--executor", "ray", "--cpu-workers", "2", sleep=2.0)
    tree: set[int] = set()
    try:
        wait_for(lambda: any(_cmdline(p).startswith(b"ray::StageRunner") for p in descendants(proc.pid)), 180,
                 "the run's Ray actors")
        tree = descendants(proc.pid)   # the daemons, the raylet's agents, the actors and the watcher
        assert any(b"raylet" in _cmdline(p) for p in tree) and len(tree) >= 5
        actors = [p for p in tree if _cmdline(p).startswith(b"ray::StageRunner")]
        # at the niceness of the run (Ray's default for its workers is 15)
        assert {os.getpriority(os.PRIO_PROCESS, p) for p in actors} == {os.getpriority(os.PRIO_PROCESS, proc.pid)}
        proc.kill()
        proc.wait(10)
        wait_for(lambda: not any(alive(p) for p in tree), 10,
                 f"processes {[_cmdline(p)[:60] for p in tree if alive(p)]} to end")
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in tree:   # a failing run of this test must not leave them behind either
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
