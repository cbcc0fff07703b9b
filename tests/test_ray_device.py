"""`--device` of a `--ray-address` run is checked against the cluster's GPUs (`ray.cluster_resources()`), not the
driver's: a CPU-only driver starts a `--device cuda` run on a GPU cluster, a cluster without a GPU refuses it
before anything is written, and the local executor keeps checking this machine; a run's own instance with
`--device cuda:N` sees GPU N only. A fake Ray stands in for the cluster (no GPU, no Ray instance needed)."""
from __future__ import annotations

import os

import pytest

from tests.support.run_inputs import png, prompts
from vistar.engine import runner
from vistar.engine.executors import ray_exec
from vistar.engine.runner import ScoreConfig, run_score
from vistar.runtime import device as device_module
from vistar.runtime.device import DeviceUnavailable


class FakeRay:
    """The part of Ray's API a run uses before its pipeline: connect, ask the cluster's resources, disconnect."""

    def __init__(self, resources: dict):
        self.resources, self.calls = resources, []

    def is_initialized(self):
        return bool(self.calls) and self.calls[-1] != "shutdown"

    def init(self, address=None, **kwargs):
        self.calls.append(f"init {address}")

    def cluster_resources(self):
        return dict(self.resources)

    def shutdown(self):
        self.calls.append("shutdown")


class RecordingExecutor:
    """Scores nothing; keeps the configuration the runner opened it with."""

    name, workers, stage_seconds, startup = "fake", 1, {}, {}
    opened: list = []

    def __init__(self, cfg, ctx, ontology, n_batches, warm=False):
        RecordingExecutor.opened.append(cfg)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def score(self, batches):
        return iter(())


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """A run folder's inputs, a driver without any GPU, and a fake cluster of the given resources."""
    png(tmp_path / "imgs" / "m" / "p1.png")
    prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"'])
    monkeypatch.setattr(device_module, "cuda_devices", lambda: (0, "no CUDA GPU on this machine"))
    RecordingExecutor.opened = []
    monkeypatch.setattr(runner, "open_executor", RecordingExecutor)

    def connect(resources):
        fake = FakeRay(resources)
        monkeypatch.setattr(ray_exec, "import_ray", lambda address=None: fake)
        return fake

    return connect


def _config(tmp_path, device, **executor):
    return ScoreConfig(images=tmp_path / "imgs", prompts=tmp_path / "p.vistar", out=tmp_path / "run", device=device,
                       **executor)


def test_a_cpu_only_driver_starts_a_cuda_run_on_a_gpu_cluster(tmp_path, cluster):
    fake = cluster({"CPU": 16.0, "GPU": 2.0})
    run_score(_config(tmp_path, "cuda", executor="ray", ray_address="10.0.0.5:6379"))
    [cfg] = RecordingExecutor.opened
    assert cfg.device == "cuda" and cfg.device_requested == "cuda"
    assert fake.calls == ["init 10.0.0.5:6379", "shutdown"]   # the runner connects once (the executor reuses it: last test)


@pytest.mark.parametrize("requested, resolved, asked", [("auto", "cuda", True), ("cpu", "cpu", False)])
def test_auto_follows_the_cluster_and_cpu_stays_cpu(tmp_path, cluster, requested, resolved, asked):
    fake = cluster({"CPU": 4.0, "GPU": 1.0})
    run_score(_config(tmp_path, requested, executor="ray", ray_address="auto"))
    assert RecordingExecutor.opened[0].device == resolved
    assert bool(fake.calls) is asked   # a CPU run needs no answer from the cluster before it plans


def test_a_cluster_without_gpu_refuses_cuda_before_anything_is_written(tmp_path, cluster):
    fake = cluster({"CPU": 8.0})
    with pytest.raises(DeviceUnavailable, match="the Ray cluster has no GPU .*8 CPUs"):
        run_score(_config(tmp_path, "cuda", executor="ray", ray_address="10.0.0.5:6379"))
    assert not (tmp_path / "run").exists() and not RecordingExecutor.opened
    assert fake.calls == ["init 10.0.0.5:6379", "shutdown"]
    run_score(_config(tmp_path, "auto", executor="ray", ray_address="10.0.0.5:6379"))
    assert RecordingExecutor.opened[0].device == "cpu"   # auto on that cluster: CPU


def test_a_gpu_index_is_refused_on_a_cluster(tmp_path, cluster):
    cluster({"CPU": 8.0, "GPU": 4.0})
    with pytest.raises(ValueError, match="--device cuda:1 with --ray-address: use --device cuda"):
        run_score(_config(tmp_path, "cuda:1", executor="ray", ray_address="auto"))


@pytest.mark.parametrize("executor", [{}, {"executor": "ray"}])
def test_this_machine_is_checked_without_a_cluster_address(tmp_path, cluster, executor):
    """The local executor, and a Ray instance the run starts here, run on this machine's GPUs: it has none."""
    fake = cluster({"CPU": 2.0, "GPU": 8.0})   # never asked
    with pytest.raises(DeviceUnavailable, match="no CUDA GPU on this machine"):
        run_score(_config(tmp_path, "cuda", **executor))
    assert fake.calls == [] and not (tmp_path / "run").exists()


def test_the_executor_reuses_the_runs_connection(monkeypatch):
    """A Ray the runner (or a notebook) connected is used as it is and left connected."""
    fake = FakeRay({"CPU": 1.0})
    fake.init("10.0.0.5:6379")
    monkeypatch.setattr(ray_exec, "import_ray", lambda address=None: fake)
    with ray_exec.ray_session("10.0.0.5:6379") as ray:
        assert ray is fake
    assert fake.calls == ["init 10.0.0.5:6379"]


@pytest.mark.slow
def test_a_rerun_with_nothing_left_to_score_starts_no_ray(tmp_path, monkeypatch):
    png(tmp_path / "imgs" / "m" / "p1.png")
    prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"'])
    run_score(_config(tmp_path, "cpu", cpu_workers=1))   # every row written here
    fake = FakeRay({"CPU": 2.0})
    monkeypatch.setattr(ray_exec, "import_ray", lambda address=None: fake)
    summary = run_score(_config(tmp_path, "cpu", executor="ray"))
    assert summary.scored == 0 and summary.reused > 0 and fake.calls == []


def test_the_cli_leaves_a_cluster_runs_device_to_the_cluster(tmp_path, cluster):
    """`vistar score --ray-address ... --device cuda` from a CPU-only driver: the CLI's early device check is this
    machine's, so it is skipped for a cluster run and the cluster's check decides (a GPU cluster: the run starts)."""
    from typer.testing import CliRunner

    from vistar.cli import app

    cluster({"CPU": 16.0, "GPU": 2.0})
    args = ["score", str(tmp_path / "imgs"), "--prompts", str(tmp_path / "p.vistar"), "--out", str(tmp_path / "run"),
            "--executor", "ray", "--device", "cuda"]
    refused = CliRunner().invoke(app, args)   # a Ray instance started here would run on this machine: no GPU
    assert refused.exit_code != 0 and "no CUDA GPU on this machine" in refused.output and not RecordingExecutor.opened
    started = CliRunner().invoke(app, [*args, "--ray-address", "10.0.0.5:6379"])
    assert started.exit_code == 4, started.output   # the recording executor scores nothing: "nothing to score"
    assert "no CUDA GPU" not in started.output and [cfg.device for cfg in RecordingExecutor.opened] == ["cuda"]
    for typo in ("gpu", "cuda:1"):   # a device a cluster run cannot use is refused before connecting
        refused = CliRunner().invoke(app, [*args[:-1], typo, "--ray-address", "10.0.0.5:6379"])
        assert refused.exit_code != 0 and f"--device {typo} with --ray-address" in refused.output and len(RecordingExecutor.opened) == 1


class GpuRecordingRay(FakeRay):
    """Records which GPUs the instance it starts would see (Ray's raylet reads CUDA_VISIBLE_DEVICES at init)."""

    def init(self, address=None, **kwargs):
        super().init(address, **kwargs)
        self.visible = os.environ.get("CUDA_VISIBLE_DEVICES")


@pytest.mark.parametrize("visible, device, seen", [(None, "cuda:1", "1"), ("4,6", "cuda:1", "6"), ("4,6", "cuda", "4,6"),
                                                   (None, "cuda", None), ("GPU-a, GPU-b", "cuda:0", "GPU-a")])
def test_a_runs_own_instance_sees_only_the_gpu_of_cuda_n(monkeypatch, visible, device, seen):
    """`--device cuda:N` without `--ray-address`: the instance the run starts offers GPU N alone (the Nth visible
    one, as torch counts), so every GPU actor, told `cuda`, lands there; the driver's own setting is kept."""
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    fake = GpuRecordingRay({"CPU": 2.0, "GPU": 1.0})
    monkeypatch.setattr(ray_exec, "import_ray", lambda address=None: fake)
    with ray_exec.ray_session(None, device=device):
        assert fake.visible == seen and fake.calls == ["init local"]
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == visible and fake.calls[-1] == "shutdown"


def test_a_gpu_index_past_the_visible_ones_or_on_a_started_ray_is_refused(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    fake = GpuRecordingRay({"CPU": 2.0, "GPU": 2.0})
    monkeypatch.setattr(ray_exec, "import_ray", lambda address=None: fake)
    with pytest.raises(DeviceUnavailable, match="shows 2 GPU"):
        with ray_exec.ray_session(None, device="cuda:2"):
            pass
    assert fake.calls == []
    fake.init("local")   # a Ray this process started before the run: its GPUs are its own
    with pytest.raises(ValueError, match="--device cuda:1 with a Ray already started"):
        with ray_exec.ray_session(None, device="cuda:1"):
            pass
