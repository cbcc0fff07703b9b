"""`--executor ray`: the planned batches as a Ray Dataset, scored by `map_batches` over a pool of actors.

Each actor is one process with one thread (`num_cpus=1`; Ray sets OMP_NUM_THREADS to it) that loads its models
once and decodes, runs every stage and applies the metrics for the batches it is given (`work.BatchWorker`, the
code the local executors run). With `--device cuda` each actor also asks for a share of a GPU (the cluster's GPUs
divided among the actors, at most one each), so small models share a GPU. Ray restarts an actor that dies and
re-runs its task; the driver keeps the first result of every batch and hands rows to the runner in batch order,
so the store gets exactly the rows of a local run, once each, and a driver killed mid-run resumes like a local run.
Only the small packed job lists are in the Dataset: images are read and decoded inside the actors, so memory is
bounded by the batches in flight, not by the run.
"""
from __future__ import annotations

import logging
import os
import pickle

import numpy as np

from . import usable_cores
from .work import BatchWorker, WorkerSetup, absorb, pack, single_thread_env

MISSING = "--executor ray needs Ray: pip install 'vistar[ray]'"
BLOCKS_PER_ACTOR = 4   # Dataset blocks per actor: small enough to balance the load, few enough to cost little


# Ray advertises a node at the machine's network address even when told 127.0.0.1 (it rewrites loopback addresses);
# this switch of Ray's (public, named for Windows/macOS, where clusters are off by default) keeps a node, and a
# driver, on 127.0.0.1. Set for a run's own local instance and for clusters at a loopback address: a run that serves
# this machine only listens on loopback only.
LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def is_loopback(address: str | None) -> bool:
    """No address (a local instance of the run's own) or a 127.x.x.x / localhost / [::1] one."""
    host = (address or "127.0.0.1").rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def import_ray(address: str | None = None):
    """Ray and Ray Data, or a ValueError naming the extra that installs them; on loopback only when ADDRESS is
    (Ray reads the switch when it is imported, so a Ray the caller imported and started keeps its own setting)."""
    if is_loopback(address) and address != "auto":
        os.environ.setdefault(LOOPBACK_ONLY, "0")
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"{MISSING} ({exc})") from None
    return ray


class _Scorer:
    """The Ray actor: one `BatchWorker` for the actor's life (models load once), called with Dataset batches."""

    def __init__(self, setup: bytes):
        single_thread_env()
        run = pickle.loads(setup)
        # Ray narrows CUDA_VISIBLE_DEVICES to the actor's GPU, which is then this process's `cuda`
        device = "cuda" if run.device.startswith("cuda") else run.device
        self.worker = BatchWorker(run, device)

    def __call__(self, batch: dict) -> dict:
        reports = [pickle.dumps(self.worker.score(bytes(p))) for p in batch["payload"]]
        return {"index": np.asarray(batch["index"]), "report": np.array(reports, dtype=object)}


class RayExecutor:
    name = "ray"

    def __init__(self, cfg, ctx, ontology, n_batches: int):
        self.ray = import_ray(cfg.ray_address)
        self.cfg, self.ctx, self.n_batches = cfg, ctx, n_batches
        self.setup = pickle.dumps(WorkerSetup.of_run(cfg, ctx, ontology))
        self.stage_seconds: dict[str, float] = {}
        self.workers = 0
        self.started = False

    def __enter__(self):
        ray = self.ray
        if not ray.is_initialized():  # else: the caller's Ray session (a notebook, a test) is used as it is
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            common = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            if self.cfg.ray_address:
                ray.init(address=self.cfg.ray_address, **common)
            else:  # a Ray instance on this machine only, for this run ("local": never one RAY_ADDRESS or the last
                # `ray start` on this machine points at, which would refuse num_cpus or outlive the run)
                ray.init(address="local", num_cpus=usable_cores(), **common)
            self.started = True
        logging.getLogger("ray.data").setLevel(logging.ERROR)  # the run's own progress and summary say the rest
        ray.data.DataContext.get_current().enable_progress_bars = False
        return self

    def __exit__(self, *exc):
        if self.started:
            self.ray.shutdown()

    def _actors(self) -> tuple[int, float]:
        """(actors, GPUs per actor): `--cpu-workers` or the cluster's CPUs, never more than there are batches."""
        resources = self.ray.cluster_resources()
        cpus = int(resources.get("CPU", 1))
        actors = max(1, min(self.cfg.cpu_workers or cpus, cpus, self.n_batches))
        if self.cfg.device == "cpu":
            return actors, 0.0
        gpus = float(resources.get("GPU", 0))
        if gpus <= 0:
            raise ValueError(f"--device {self.cfg.device} with --executor ray: the Ray cluster has no GPU")
        return actors, min(1.0, gpus / actors)

    def score(self, batches):
        batches = list(batches)
        if not batches:
            return
        actors, gpus = self._actors()
        self.workers = actors
        items = [{"index": i, "payload": pack(b)} for i, b in enumerate(batches)]
        dataset = self.ray.data.from_items(items, override_num_blocks=min(len(items), actors * BLOCKS_PER_ACTOR))
        scored = dataset.map_batches(_Scorer, fn_constructor_kwargs={"setup": self.setup}, batch_size=1,
                                     compute=self.ray.data.ActorPoolStrategy(size=actors), num_cpus=1, num_gpus=gpus or None, batch_format="numpy")
        waiting: dict[int, object] = {}
        next_index = 0
        for record in scored.iter_rows():
            index = int(record["index"])
            if index < next_index or index in waiting:  # a re-run task's second answer for a batch
                continue
            waiting[index] = pickle.loads(record["report"])
            while next_index in waiting:  # rows leave in batch order, as in a local run
                report = waiting.pop(next_index)
                absorb(report, self.ctx, self.stage_seconds)
                yield batches[next_index], report.rows
                next_index += 1
        if next_index < len(batches):
            raise RuntimeError(f"the Ray pipeline returned {next_index} of {len(batches)} batches; "
                               "rerun the same command to score the rest")
