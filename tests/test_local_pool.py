"""The local pool's workers run each library on one thread, and starting the pool leaves the run's own
environment as it was."""
from __future__ import annotations

import json
import os

import pytest

from tests.support.executor_helpers import fake_table, fake_workload
from vistar.api import FeatureStage, Metric, MetricResult
from vistar.engine import registry

pytestmark = pytest.mark.slow

cv2 = pytest.importorskip("cv2", reason="OpenCV is a core dependency of the CPU stages")


def _threads(batch, ctx):
    """What the process scoring the batch runs each library with."""
    import cv2

    seen = {"pid": os.getpid(), "opencv": cv2.getNumThreads()}
    try:
        import torch
    except ImportError:
        pass
    else:
        seen["torch"] = torch.get_num_threads()
    return [dict(seen) for _ in batch]


def _report(features, controls, params, prompt):
    return MetricResult.ok(1.0, **features["worker_threads"])


THREADS_STAGE = FeatureStage(name="worker_threads", version="1", compute=_threads)
THREADS_METRIC = Metric(name="TR", angle="TR", version="1", features=("worker_threads",), fn=_report)


@pytest.fixture
def threads_plugins(monkeypatch):
    monkeypatch.setattr(registry, "FEATURES", {"worker_threads": "tests.test_local_pool:THREADS_STAGE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.test_local_pool:THREADS_METRIC"})


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: every library already runs one thread")
def test_pool_workers_run_every_library_on_one_thread(threads_plugins, tmp_path):
    threads = cv2.getNumThreads()
    cv2.setNumThreads(2)  # this process uses two (an earlier test may have set 1), so the workers' 1 is their own
    try:
        _check_one_thread_workers(tmp_path)
    finally:
        cv2.setNumThreads(threads)


def _check_one_thread_workers(tmp_path):
    before = dict(os.environ)
    table = fake_table(fake_workload(tmp_path / "w"), tmp_path / "run", cpu_workers=2)
    assert dict(os.environ) == before  # the workers' one-thread settings never reach the run's own process
    seen = [json.loads(d) for d in table.details]
    assert len(seen) == 24 and all(s["pid"] != os.getpid() for s in seen)
    assert {s["opencv"] for s in seen} == {1}
    assert {s.get("torch", 1) for s in seen} == {1}
