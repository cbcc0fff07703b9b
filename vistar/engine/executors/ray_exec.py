"""`--executor ray`: the planned batches as a Ray Dataset streamed through pools of actors (`ray_plan.py`).

A pool per group of feature stages (a GPU share each with `--device cuda` where the stages run on the run's
device), the first group's actors decoding when it is a CPU group and the last one's applying the metrics when
it is one (pools of their own next to a GPU group); each actor is one process with one thread that loads its models once (`ray_stages.py`). A
planned batch stays one Dataset row from the first pool to the last, so every stage runs on the images the local
executor would run it on together. Ray restarts an actor that dies and re-runs its task; the driver keeps the
first result of every batch and hands rows to the runner in batch order, so the store gets exactly the rows of a
local run, once each, and a driver killed mid-run resumes like a local run. Ray Data streams: a few batches per
actor are in flight, so memory is bounded by them, not by the run.
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
import pickle
from typing import Any, Iterable, Iterator

from ...api import StageContext
from ...ontology import Ontology
from ...runtime.device import DeviceUnavailable
from .. import registry
from ..batch import stages_wanted
from ..plan import Batch, Row
from .ray_plan import RayStage, map_batches_args, plan
from .ray_stages import InFlight, dumps
from .work import BatchReport, WorkerSetup, absorb, pack
from .workers import ExecutorOptions, usable_cores

MISSING = "--executor ray needs Ray: pip install 'vistar[ray]'"
# A Dataset block is one actor task (~10 ms of Ray's time on a 2-core VM): at the end of a run the last blocks run
# while other actors idle, so a block holds one batch in short runs and at most MAX_BATCHES_PER_BLOCK in long ones.
MIN_BLOCKS_PER_ACTOR = 16
MAX_BATCHES_PER_BLOCK = 8


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


def blocks(n_batches: int, actors: int) -> int:
    """Dataset blocks for N_BATCHES batches over ACTORS actors of the widest pool."""
    return min(n_batches, max(actors * MIN_BLOCKS_PER_ACTOR, math.ceil(n_batches / MAX_BATCHES_PER_BLOCK)))


@contextlib.contextmanager
def ray_session(address: str | None) -> Iterator[Any]:
    """Ray connected to the cluster at ADDRESS, or a Ray instance started on this machine for the run (no
    ADDRESS), shut down after it; a Ray the caller already started (a notebook, a test) is used as it is."""
    ray = import_ray(address)
    started = not ray.is_initialized()
    if started:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        common = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        if address:
            ray.init(address=address, **common)
        else:  # a Ray instance on this machine only, for this run ("local": never one RAY_ADDRESS or the last
            # `ray start` on this machine points at, which would refuse num_cpus or outlive the run)
            ray.init(address="local", num_cpus=usable_cores(), **common)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


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
        self.workers = 0
        self.session = contextlib.ExitStack()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: Any) -> bool | None:
        return self.session.__exit__(*exc)

    def connect(self) -> Any:
        """Ray for this run, started (or connected) when there is something to score: a rerun of a complete run
        does not start Ray."""
        ray = self.session.enter_context(ray_session(self.cfg.ray_address))
        logging.getLogger("ray.data").setLevel(logging.ERROR)  # the run's own progress and summary say the rest
        ray.data.DataContext.get_current().enable_progress_bars = False
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
        self.ray = self.connect()
        pipeline = self.pipeline(batches)
        self.workers = max((stage.actors for stage in pipeline if stage.role == "stages"), default=1)
        items = [{"index": i, "state": dumps(InFlight(pack(b)))} for i, b in enumerate(batches)]
        dataset = self.ray.data.from_items(items, override_num_blocks=blocks(len(items), self.workers))
        for kwargs in map_batches_args(pipeline, self.setup, self.cfg.max_pixels):
            dataset = dataset.map_batches(kwargs.pop("fn"), **kwargs)
        waiting: dict[int, list[BatchReport]] = {}
        next_index = 0
        for record in dataset.iter_rows():
            index = int(record["index"])
            if index < next_index or index in waiting:  # a re-run task's second answer for a batch
                continue
            waiting[index] = pickle.loads(record["report"])
            while next_index in waiting:  # rows leave in batch order, as in a local run
                reports = waiting.pop(next_index)
                for report in reports:
                    absorb(report, self.ctx, self.stage_seconds)
                yield batches[next_index], reports[-1].rows
                next_index += 1
        if next_index < len(batches):
            raise RuntimeError(f"the Ray pipeline returned {next_index} of {len(batches)} batches; "
                               "rerun the same command to score the rest")
