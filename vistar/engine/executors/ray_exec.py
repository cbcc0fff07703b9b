"""`--executor ray`: the planned batches through pools of Ray actors (`ray_plan.py`).

A pool per group of feature stages (a GPU share each with `--device cuda` where the stages run on the run's
device), the first group's actors decoding when it is a CPU group and the last one's applying the metrics when
it is one (pools of their own next to a GPU group); each actor is one process with one thread that loads its
models once (`ray_stages.py`). A CPU run is one pool whose actors each do what a `--cpu-workers` process does.
A planned batch goes from pool to pool as one object (each call takes the previous one's result), so every stage
runs on the images the local executor would run it on together. Each batch goes to the actor of each pool with the
fewest batches in flight, and at most `IN_FLIGHT_PER_ACTOR` batches per actor of the widest pool are in flight
(finished or not, while an earlier one is awaited): memory is bounded by them, not by the run. When an actor dies,
every batch that died with it is run again alone on a fresh actor once the batches in flight are in
(`ray_pools.py`), so only a batch that kills an actor by itself ends as error rows. The driver hands rows to
the runner in batch order, so the store gets exactly the rows of a local run, once each, and a driver killed
mid-run resumes like a local run.
"""
from __future__ import annotations

import contextlib
import logging
import os
import pickle
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from ...api import StageContext
from ...ontology import Ontology
from ...runtime.device import DeviceUnavailable
from ...runtime.scoped import scoped_entries
from .. import registry
from ..batch import stages_wanted
from ..plan import Batch, Row
from .ray_instance import RAY_LOG, InstanceWatcher, RayLogToFile, children
from .ray_plan import RayStage, actor_specs, plan
from .ray_pools import ActorPools
from .ray_stages import InFlight, dumps
from .work import BatchReport, WorkerSetup, _failed_rows, absorb, pack
from .workers import ExecutorOptions, usable_cores

MISSING = "--executor ray needs Ray: pip install 'vistar[ray]'"
IN_FLIGHT_PER_ACTOR = 2   # as the process pool: one batch running, one waiting in the actor's queue
WORKER_NICENESS = "RAY_worker_niceness"   # Ray's setting (read by the raylet from its environment)
VISIBLE_GPUS = "CUDA_VISIBLE_DEVICES"      # Ray's GPU ids are the ones its raylet sees here (and it sets it per actor)

# Ray advertises a node at the machine's network address even when told 127.0.0.1 (it rewrites loopback addresses);
# this switch of Ray's (public, named for Windows/macOS, where clusters are off by default) keeps a node, and a
# driver, on 127.0.0.1. Set for a run's own local instance and for clusters at a loopback address: a run that serves
# this machine only listens on loopback only.
LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def is_loopback(address: str | None) -> bool:
    """No address (a local instance of the run's own) or a 127.x.x.x / localhost / [::1] one."""
    host = (address or "127.0.0.1").rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def import_ray(address: str | None = None) -> Any:
    """Ray, or a ValueError naming the extra that installs them; on loopback only when ADDRESS is
    (Ray reads the switch when it is imported, so a Ray the caller imported and started keeps its own setting)."""
    if is_loopback(address) and address != "auto":
        os.environ.setdefault(LOOPBACK_ONLY, "0")
    try:
        import ray
    except ImportError as exc:
        raise ValueError(f"{MISSING} ({exc})") from None
    return ray


def instance_gpus(device: str) -> dict[str, str]:
    """The environment a run's own Ray instance starts with for DEVICE: with `cuda:N` it sees GPU N only (the Nth
    of CUDA_VISIBLE_DEVICES where that is set, as torch counts), so Ray offers that one GPU and gives it to every
    GPU actor (whose device is `cuda`: their only GPU)."""
    if not device.startswith("cuda:"):
        return {}
    index = int(device[5:])
    visible = os.environ.get(VISIBLE_GPUS)
    if visible is None:
        return {VISIBLE_GPUS: str(index)}
    ids = [gpu.strip() for gpu in visible.split(",") if gpu.strip()]
    if index >= len(ids):
        raise DeviceUnavailable(f"--device {device}: {VISIBLE_GPUS}={visible!r} shows {len(ids)} GPU(s)")
    return {VISIBLE_GPUS: ids[index]}


@contextlib.contextmanager
def ray_session(address: str | None, log: Path | None = None, device: str = "cpu") -> Iterator[Any]:
    """Ray connected to the cluster at ADDRESS, or a Ray instance started on this machine for the run (no
    ADDRESS; on GPU N only for DEVICE `cuda:N`: `instance_gpus`), shut down after it and watched so that it ends
    with this process however it ends (`ray_instance`); Ray's log lines go to LOG, not the terminal. A Ray the
    caller already started (a notebook, a test) is used as it is, so it cannot be held to one GPU: `cuda:N` is
    refused there."""
    ray = import_ray(address)
    started = not ray.is_initialized()
    if not started and device.startswith("cuda:"):
        raise ValueError(f"--device {device} with a Ray already started in this process: Ray gives each GPU actor "
                         f"a GPU of its own choosing; use --device cuda, or start that Ray with {VISIBLE_GPUS}="
                         f"{device[5:]}")
    watcher = None
    with RayLogToFile(log if started else None):
        if started:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            common = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.INFO)
            if address:
                ray.init(address=address, **common)
            else:  # a Ray instance on this machine only, for this run ("local": never one RAY_ADDRESS or the last
                # `ray start` on this machine points at, which would refuse num_cpus or outlive the run)
                # Ray starts its workers at niceness 15: on a machine shared with other work they would get a fraction
                # of the cores the pool's processes (niceness 0) get
                os.environ.setdefault(WORKER_NICENESS, "0")
                before = children(os.getpid())
                with scoped_entries(os.environ, instance_gpus(device)):   # the raylet and its workers inherit it
                    ray.init(address="local", num_cpus=usable_cores(), **common)
                watcher = InstanceWatcher({pid: name for pid, name in children(os.getpid()).items() if pid not in before})
        try:
            yield ray
        finally:
            try:
                if started:
                    ray.shutdown()
            finally:   # a shutdown that fails still leaves nothing of the instance behind
                if watcher is not None:
                    watcher.close()


def check_cluster_device(requested: str) -> None:
    """A cluster run's `--device` is cpu, cuda or auto (checked before connecting: an unreachable cluster would
    hide a typo); `cuda:N` names a GPU of one machine, while Ray gives each GPU actor its own."""
    if requested not in ("cpu", "cuda", "auto"):
        raise ValueError(f"--device {requested} with --ray-address: use --device cuda (Ray gives each GPU actor "
                         "its GPU), cpu or auto")


def cluster_device(ray: Any, requested: str) -> str:
    """`--device` (cpu, cuda or auto: `check_cluster_device`) of a run on a Ray cluster (`--ray-address`): the
    cluster's GPUs decide, not the driver's (a CPU-only machine may drive a GPU cluster). `auto` is `cuda` when
    the cluster has a GPU."""
    if requested == "cpu":
        return "cpu"
    resources = ray.cluster_resources()
    if resources.get("GPU", 0) > 0:
        return "cuda"
    if requested == "auto":
        return "cpu"
    raise DeviceUnavailable(f"--device cuda: the Ray cluster has no GPU (it offers {resources.get('CPU', 0):g} "
                            "CPUs and no GPU); score with --device cpu or auto, or add GPU nodes to the cluster")


class RayExecutor:
    name = "ray"

    def __init__(self, cfg: ExecutorOptions, ctx: StageContext, ontology: Ontology, n_batches: int):
        self.cfg, self.ctx, self.n_batches = cfg, ctx, n_batches
        self.setup = pickle.dumps(WorkerSetup.of_run(cfg, ctx, ontology))
        self.stage_seconds: dict[str, float] = {}
        self.startup: dict[str, float] = {}
        self.workers = 0
        self.session = contextlib.ExitStack()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: Any) -> bool | None:
        return self.session.__exit__(*exc)

    def connect(self) -> Any:
        """Ray for this run, started (or connected) when there is something to score: a rerun of a complete run
        does not start Ray. Its seconds are reported apart (`ray_start_s` for an instance of the run's own)."""
        start = time.perf_counter()
        ray = self.session.enter_context(ray_session(self.cfg.ray_address, self.cfg.out / RAY_LOG,
                                                           self.cfg.device))
        self.startup["ray_connect_s" if self.cfg.ray_address else "ray_start_s"] = time.perf_counter() - start
        return ray

    def pipeline(self, batches: list[Batch]) -> list[RayStage]:
        """The pools for the stages these batches need, sized to the cluster (`ray_plan.plan`)."""
        stages = registry.stage_order(set().union(*(wanted for batch in batches for wanted in stages_wanted(batch))))
        resources = self.ray.cluster_resources()
        return plan(stages, self.cfg.device, resources.get("CPU", 1), resources.get("GPU", 0), len(batches),
                    self.cfg.cpu_workers, self.ctx.features)

    def score(self, batches: Iterable[Batch]) -> Iterator[tuple[Batch, list[Row]]]:
        batches = list(batches)
        if not batches:
            return
        began = time.perf_counter()
        self.ray = self.connect()
        pipeline = self.pipeline(batches)
        self.workers = max((stage.actors for stage in pipeline if stage.role == "stages"), default=1)
        pools = ActorPools(self.ray, actor_specs(pipeline, self.cfg.max_pixels))
        setup = [self.ray.put(self.setup)]   # in a list: Ray passes the reference, each actor fetches it once
        limit = IN_FLIGHT_PER_ACTOR * pools.widest
        pending: dict[Any, tuple[int, list[int]]] = {}
        done: dict[int, list[BatchReport]] = {}
        died: list[int] = []   # batches whose actor died: run again alone once nothing else is in flight
        submitted = 0
        for index, batch in enumerate(batches):
            while True:
                while not died and submitted < len(batches) and submitted - index < limit:
                    ref, picks = pools.submit(setup, dumps(InFlight(pack(batches[submitted]))))
                    pending[ref] = (submitted, picks)
                    submitted += 1
                if index in done:
                    break
                if pending:
                    [ref], _ = self.ray.wait(list(pending), num_returns=1)
                    finished, picks = pending.pop(ref)
                    pools.release(picks)
                    try:
                        done[finished] = self.reports(ref)
                    except self.ray.exceptions.RayError:
                        died.append(finished)
                else:
                    pools.replace_dead()
                    for k in sorted(died):
                        done[k] = self.alone(pools, setup, batches[k])
                    died.clear()
            reports = done.pop(index)
            for report in reports:
                absorb(report, self.ctx, self.stage_seconds)
            if index == 0:
                self.startup["first_batch_s"] = time.perf_counter() - began
            yield batch, reports[-1].rows

    def reports(self, ref: Any) -> list[BatchReport]:
        """Every actor's report for the batch (the last one holding its rows); Ray's error when it lost the batch."""
        reports: list[BatchReport] = pickle.loads(self.ray.get(ref))
        return reports

    def alone(self, pools: ActorPools, setup: list[Any], batch: Batch) -> list[BatchReport]:
        """BATCH, whose actor died (perhaps for another batch queued on it), run with nothing else in flight;
        error rows when it kills an actor again."""
        ref, picks = pools.submit(setup, dumps(InFlight(pack(batch))))
        try:
            return self.reports(ref)
        except self.ray.exceptions.RayError as exc:
            pools.replace_dead()
            message = (f"the Ray actor scoring this batch died on it, also when it ran alone (killed, out of memory, or "
                       f"a crash in a native library): {type(exc).__name__}: {str(exc)[:500]}")
            return [BatchReport(_failed_rows(pickle.loads(pack(batch)), message))]
        finally:
            pools.release(picks)
