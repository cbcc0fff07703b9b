"""A run's processes and files end honestly: no decode worker outlives a SIGKILLed `vistar score`, SIGTERM and Ctrl-C
leave `run.json` saying `interrupted`, a failed write names its path, and a refused merge names the lock holder."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import engine_plugins
from tests.support.live_cli import scene, start_cli, wait_for
from tests.support.processes import alive, descendants
from vistar.engine import store as store_mod
from vistar.engine.merge import MergeError, merge_runs
from vistar.engine.runner import ScoreConfig, run_score


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
def test_no_worker_outlives_a_sigkilled_run(tmp_path):
    scene(tmp_path)
    proc = start_cli(tmp_path, tmp_path / "run", "--workers", "2")
    try:
        # resource tracker, forkserver and the 2 decode workers
        tree = wait_for(lambda: (lambda d: d if len(d) >= 4 else None)(descendants(proc.pid)), 90, "the decode workers")
        proc.kill()
        proc.wait(10)
        wait_for(lambda: not any(alive(p) for p in tree), 20, f"processes {sorted(p for p in tree if alive(p))} to end")
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in locals().get("tree", ()):  # a failing run of this test must not leave them behind either
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_says_interrupted_in_run_json(tmp_path, signum):
    scene(tmp_path)
    run = tmp_path / "run"
    proc = start_cli(tmp_path, run, sleep=0.5)
    try:
        wait_for(lambda: (run / "run.json").exists() and json.loads((run / "run.json").read_text())["status"] == "running",
                 90, "the run to start")
        proc.send_signal(signum)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "interrupted" and meta["interrupted"]["signal"] == signum.name
    from vistar.engine.runmeta import run_status_notes

    assert f"stopped by {signum.name}" in run_status_notes(run)[0]
    assert proc.returncode != 0


@pytest.mark.slow
def test_a_sigkilled_run_leaves_running_not_interrupted(tmp_path):
    """Only a run that could react says interrupted; a killed one stays `running` (the report says so too)."""
    scene(tmp_path)
    run = tmp_path / "run"
    proc = start_cli(tmp_path, run, sleep=0.5)
    try:
        wait_for(lambda: (run / "run.json").exists(), 90, "the run to start")
        proc.kill()
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert json.loads((run / "run.json").read_text())["status"] == "running"


@pytest.mark.parametrize("pyarrow_style", [False, True])
def test_a_full_disk_names_the_file_being_written(tmp_path, monkeypatch, pyarrow_style):
    engine_plugins.install(monkeypatch)
    prompts = scene(tmp_path, 3)
    real = store_mod.pq.write_table

    def full(table, where, *args, **kwargs):
        if ".scores" in str(where):  # the shard write; the hash cache before it still works
            if pyarrow_style:  # pyarrow's own wording: no file named, the errno inside the message
                raise OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")
            raise OSError(28, "No space left on device")
        return real(table, where, *args, **kwargs)

    monkeypatch.setattr(store_mod.pq, "write_table", full)
    with pytest.raises(OSError) as caught:
        run_score(ScoreConfig(tmp_path / "imgs", prompts, tmp_path / "run"))
    message = str(caught.value)
    assert "No space left on device" in message and str(tmp_path / "run" / ".scores") in message
    assert pyarrow_style or caught.value.errno == 28


def test_a_full_disk_names_run_json(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch)
    prompts = scene(tmp_path, 2)
    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.name.startswith(".run.json"):
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError, match=r"No space left on device: '.*run\.json'"):
        run_score(ScoreConfig(tmp_path / "imgs", prompts, tmp_path / "run"))


def test_merge_refusal_names_the_pid_holding_the_run(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch)
    prompts = scene(tmp_path, 2)
    run = tmp_path / "run"
    run_score(ScoreConfig(tmp_path / "imgs", prompts, run))
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fh = open({str(run / '.lock')!r}, 'a+'); fcntl.flock(fh, fcntl.LOCK_EX); fh.truncate(0)\n"
        "fh.write(str(os.getpid())); fh.flush(); print('held', flush=True); time.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(MergeError, match=rf"\(pid {holder.pid}\)"):
            merge_runs([run], tmp_path / "merged")
    finally:
        holder.kill()
        holder.wait()
