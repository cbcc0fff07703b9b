"""Executors give the one-process table: `--cpu-workers 2` and Ray (one local node, and a two-node cluster on
127.0.0.1) on a mixed TR/LI/CPA/GC/CSE workload with the real OCR and MediaPipe models; a stage raising on one
image, and a worker SIGKILLed mid-run (nothing lost, nothing twice), on a fast fake workload."""
from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

pytest.importorskip("transformers", reason="the mixed workload's CSE/GC/LI stages need the `cv` extra")
pytest.importorskip("mediapipe", reason="CPA needs the `pose` extra")

from tests.support import engine_plugins  # noqa: E402
from tests.support.executor_helpers import COLUMNS, build_workload, fake_table, fake_workload, install_dying_plugins, score_table  # noqa: E402
from vistar.engine.executors.ray_exec import LOOPBACK_ONLY  # noqa: E402
from vistar.engine.runner import ScoreConfig, run_score  # noqa: E402
from vistar.engine.store import read_scores  # noqa: E402

pytestmark = pytest.mark.slow

try:
    import ray
except ImportError:
    ray = None
needs_ray = pytest.mark.skipif(ray is None, reason="ray is not installed (pip install 'vistar[ray]')")
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    return build_workload(tmp_path_factory.mktemp("mixed"))


@pytest.fixture(scope="module")
def reference(workload, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VISTAR_HOME", str(tmp_path_factory.mktemp("empty-home")))  # only the weights the workload names
        return score_table(workload, tmp_path_factory.mktemp("ref") / "run", cpu_workers=1)


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    """The fake workload and its one-process table (no worker is killed there)."""
    root = fake_workload(tmp_path_factory.mktemp("fake"))
    with pytest.MonkeyPatch.context() as mp:
        engine_plugins.install(mp)
        return root, fake_table(root, root / "ref", cpu_workers=1)


@pytest.fixture(scope="module")
def local_ray():
    """A Ray instance of this process (2 CPUs, small object store, no dashboard), stopped at the end."""
    if ray is None:
        pytest.skip("ray is not installed (pip install 'vistar[ray]')")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=2, object_store_memory=200 * 1024**2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_reference_scores_every_angle(reference):
    assert len(reference) == 2 * 6 and set(reference.angle) == {"TR", "LI", "CPA", "GC", "CSE"}
    ok = set(reference[reference.status == "ok"].metric)
    assert {"TR", "CPA", "GC", "CSE"} <= ok, reference[["image", "metric", "status", "error"]]
    tr = reference.set_index(["image", "metric"]).score
    assert tr[("gen-a/t1.png", "TR")] > 0.8 and tr[("gen-b/t2.png", "TR")] > 0.8  # the real OCR read the text


def test_cpu_workers_2_equals_one_process(workload, reference, tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "empty-home"))
    table = score_table(workload, tmp_path / "pool", cpu_workers=2)
    pd.testing.assert_frame_equal(table, reference)
    run = json.loads((tmp_path / "pool" / "run.json").read_text())
    assert run["executor"]["name"] == "local" and run["executor"]["workers"] == 2
    assert {"ocr", "pose", "depth"} <= set(run["executor"]["stage_seconds"])
    assert "dpt-hybrid-midas" in run["models"]  # loaded in the workers, recorded by the driver


def test_stage_error_and_killed_pool_worker(fake, tmp_path, monkeypatch):
    root, expected = fake
    install_dying_plugins(monkeypatch)
    monkeypatch.setenv("VISTAR_TEST_KILL_MARKER", str(tmp_path / "killed"))
    table = fake_table(root, tmp_path / "run", cpu_workers=2)
    assert int((tmp_path / "killed").read_text()) != os.getpid()  # a worker died, not this process
    _assert_complete(table, expected)


def test_cli_cpu_workers_gives_the_one_process_rows_and_exit_code(fake, tmp_path, monkeypatch):
    """Through `vistar score` (whose judge options carry a cost ledger the workers must not share)."""
    from typer.testing import CliRunner

    from vistar.cli import app

    root, expected = fake
    engine_plugins.install(monkeypatch)
    results = {}
    for workers in ("1", "2"):
        out = tmp_path / workers
        res = CliRunner().invoke(app, ["score", str(root / "imgs"), "--prompts", str(root / "p.vistar"), "--out",
                                       str(out), "--batch-size", "2", "--cpu-workers", workers])
        results[workers] = res.exit_code
        assert json.loads((out / "run.json").read_text())["executor"]["workers"] == int(workers), res.output
        pd.testing.assert_frame_equal(read_scores(out)[COLUMNS].sort_values(["image", "metric"]).reset_index(drop=True),
                                      expected)
    assert results["1"] == results["2"] == 3  # p3's error rows: a partial run, either way


@pytest.mark.ray
@needs_ray
def test_ray_one_node_equals_one_process(workload, reference, tmp_path, monkeypatch, local_ray):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "empty-home"))
    table = score_table(workload, tmp_path / "ray", executor="ray", cpu_workers=2)
    pd.testing.assert_frame_equal(table, reference)
    run = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert run["executor"]["name"] == "ray" and run["executor"]["workers"] == 2
    assert "dpt-hybrid-midas" in run["models"] and run["stage_devices"]["ocr"] == "cpu"


@pytest.mark.ray
@needs_ray
def test_ray_stage_error_and_sigkilled_actor(fake, tmp_path, monkeypatch, local_ray):
    root, expected = fake
    install_dying_plugins(monkeypatch)
    monkeypatch.setenv("VISTAR_TEST_KILL_MARKER", str(tmp_path / "killed"))
    table = fake_table(root, tmp_path / "run", executor="ray", cpu_workers=2)
    assert int((tmp_path / "killed").read_text()) != os.getpid()  # an actor died, the driver replaced it
    _assert_complete(table, expected)


@pytest.mark.ray
@needs_ray
def test_ray_a_batch_that_kills_every_actor_it_meets_fails_alone(fake, tmp_path, monkeypatch, local_ray):
    """One-image batches; the stage SIGKILLs its actor on p_kill's images every time. The batches queued behind
    them on the same actor die with it: each is scored again, so only p_kill's own rows are error rows."""
    root, expected = fake
    install_dying_plugins(monkeypatch, "POISON_STAGE")
    table = fake_table(root, tmp_path / "run", batch_size=1, executor="ray", cpu_workers=2)
    assert not table.key.duplicated().any()
    errors = table[table.status == "error"]
    assert sorted(set(errors.prompt_id)) == ["p3", "p_kill"], errors[["image", "error"]]
    killed = table.prompt_id == "p_kill"
    assert killed.sum() == 4 and table[killed].error.str.contains("died").all()
    pd.testing.assert_frame_equal(table[~killed].reset_index(drop=True), expected[~killed].reset_index(drop=True))


@pytest.mark.ray
@needs_ray
def test_ray_run_resumes_a_partial_run(fake, tmp_path, monkeypatch, local_ray):
    """A run folder holding part of the rows (what a driver killed mid-run leaves): the Ray run scores the rest
    and reuses the rows there, as a local run does."""
    root, expected = fake
    engine_plugins.install(monkeypatch)
    first = tmp_path / "first.vistar"
    first.write_text("".join((root / "p.vistar").read_text().splitlines(keepends=True)[:5]))
    run_score(ScoreConfig(images=root / "imgs", prompts=first, out=tmp_path / "run", batch_size=2, cpu_workers=1))
    done = len(read_scores(tmp_path / "run"))
    assert 0 < done < len(expected)
    _assert_complete(fake_table(root, tmp_path / "run", executor="ray", cpu_workers=2), expected)
    counts = json.loads((tmp_path / "run" / "run.json").read_text())["counts"]
    assert (counts["rows_reused"], counts["rows_written"]) == (done, len(expected) - done)


def _assert_complete(table: pd.DataFrame, expected: pd.DataFrame) -> None:
    assert not table.key.duplicated().any() and not table.duplicated(["image", "metric"]).any()
    pd.testing.assert_frame_equal(table, expected)
    failed = table[table.prompt_id == "p3"]
    assert len(failed) == 4 and (failed.status == "error").all()
    assert failed.error.str.contains("stage failed on purpose").all()
    assert (table[table.prompt_id != "p3"].status != "error").all()


@pytest.mark.ray
@needs_ray
def test_two_node_cluster_equals_one_process(workload, reference, tmp_path):
    """`ray start` twice on 127.0.0.1 (one CPU each), `vistar score --executor ray --ray-address` over it; the
    cluster's processes are stopped by the session ids of the two `ray start` processes this test started."""
    if ray.is_initialized():  # the module's local instance must not stand in for the cluster
        ray.shutdown()
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="vr", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    ray_cli = [sys.executable, str(Path(__file__).parent / "support" / "ray_loopback_start.py")]   # nodes on 127.0.0.1 only
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--object-store-memory", str(100 * 1024**2),
              "--disable-usage-stats", "--block"]
    # Ray >= 2.5x enables token authentication for `ray start`: this cluster's token, given to every process
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    env.pop(LOOPBACK_ONLY, None)   # the nodes: a worker node refuses to start under the loopback-only switch
    driver_env = {**env, LOOPBACK_ONLY: "0"}   # drivers (probes, vistar) keep to 127.0.0.1 too
    nodes = [subprocess.Popen([*ray_cli, "start", "--head", "--port", str(port), "--include-dashboard", "false",
                               "--temp-dir", temp, *common], env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)]
    try:
        _wait_for_nodes(f"127.0.0.1:{port}", 1, driver_env)
        nodes.append(subprocess.Popen([*ray_cli, "start", "--address", f"127.0.0.1:{port}", *common], env=env,
                                      start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        _wait_for_nodes(f"127.0.0.1:{port}", 2, driver_env)
        root, weights = workload
        paths = [a for name, path in weights.items() for a in ("--model-path", f"{name}={path}")]
        cmd = [str(Path(sys.executable).parent / "vistar"), "score", str(root / "images"), "--prompts", str(root / "prompts.vistar"),
               "--out", str(tmp_path / "run"), "--batch-size", "2", "--ontology", str(root / "onto.yaml"), *paths,
               "--angles", "TR", "--executor", "ray", "--ray-address", f"127.0.0.1:{port}"]
        done = subprocess.run(cmd, cwd=REPO, env={**driver_env, "VISTAR_HOME": str(tmp_path / "empty-home")},
                              capture_output=True, text=True, timeout=400)
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        for node in reversed(nodes):
            _stop_session(node)
    table = read_scores(tmp_path / "run")[COLUMNS].sort_values(["image", "metric"]).reset_index(drop=True)
    expected = reference[reference.angle == "TR"].reset_index(drop=True)
    pd.testing.assert_frame_equal(table, expected)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["executor"]["workers"] == 2  # one actor per node


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_nodes(address: str, count: int, env: dict, timeout: float = 120.0) -> None:
    """Until the cluster at `address` lists `count` alive nodes (asked from a short-lived driver process)."""
    probe = ("import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
             "print(sum(n['Alive'] for n in ray.nodes()))")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run([sys.executable, "-c", probe, address], capture_output=True, text=True, timeout=120, env=env)
        if out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [str(count)]:
            return
        time.sleep(2)
    raise AssertionError(f"the Ray cluster at {address} did not reach {count} nodes: {out.stderr[-2000:]}")


def _stop_session(node: subprocess.Popen) -> None:
    """SIGTERM to `ray start --block` (it stops what it started), then SIGKILL to anything left in its session."""
    node.terminate()
    try:
        node.wait(timeout=30)
    except subprocess.TimeoutExpired:
        node.kill()
        node.wait()
    for pid in _session_members(node.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _session_members(sid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid:  # after ")": state, ppid, pgrp, session
                members.append(int(entry.name))
    return members


@pytest.mark.ray
@needs_ray
def test_a_runs_own_ray_instance_ignores_ray_address(tmp_path):
    """`--executor ray` without `--ray-address` starts its own local instance even where RAY_ADDRESS (or the last
    `ray start`) names a cluster: connecting there would refuse the run's CPU count or outlive the run."""
    (tmp_path / "imgs" / "m").mkdir(parents=True)
    Image.fromarray(np.full((48, 64, 3), 240, np.uint8)).save(tmp_path / "imgs" / "m" / "p.png")
    (tmp_path / "p.vistar").write_text('p: [GD|TR] a sign {text="HI"}\n')
    env = {**os.environ, "RAY_ADDRESS": f"127.0.0.1:{_free_port()}", "RAY_USAGE_STATS_ENABLED": "0"}
    cmd = [str(Path(sys.executable).parent / "vistar"), "score", str(tmp_path / "imgs"), "--prompts",
           str(tmp_path / "p.vistar"), "--out", str(tmp_path / "run"), "--executor", "ray"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(read_scores(tmp_path / "run")) == 1
