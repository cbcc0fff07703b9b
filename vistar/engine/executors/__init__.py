"""Executors: how `vistar score` turns its planned batches of jobs into rows (docs/engine.md, docs/scaling.md).

All of them share the planner, the stage and metric functions (`score_batch`) and the store: the runner plans,
hands the executor batches in a fixed order and writes the rows it yields. They differ only in where a batch runs:

- `local`, one worker: decode ahead and score in this process (today's loop);
- `local`, `--cpu-workers N` >= 2: N single-threaded processes on this machine (`local.ProcessPool`);
- `ray`: pools of Ray actors on a Ray cluster, or on a Ray instance started on this machine.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Protocol

from ...api import StageContext
from ...ontology import Ontology
from .workers import ExecutorOptions, local_workers

if TYPE_CHECKING:   # the job type only: importing the planner here would load it with every executor
    from ..plan import Batch, Row

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """What the runner needs of an executor: a context manager scoring batches in order, and what it did."""

    name: str
    workers: int
    stage_seconds: dict[str, float]
    startup: dict[str, float]   # what the executor paid before scoring, reported apart (Ray: starting or connecting)

    def __enter__(self) -> Executor: ...
    def __exit__(self, *exc: Any) -> bool | None: ...
    def score(self, batches: Iterable[Batch]) -> Iterator[tuple[Batch, list[Row]]]: ...


def open_executor(cfg: ExecutorOptions, ctx: StageContext, ontology: Ontology, n_batches: int,
                  warm: bool = False) -> Executor:
    """The executor for this run, as a context manager whose `score(batches)` yields `(batch, rows)` in order."""
    if cfg.executor == "ray":
        from .ray_exec import RayExecutor

        return RayExecutor(cfg, ctx, ontology, n_batches)
    if cfg.executor != "local":
        raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}, got {cfg.executor!r}")
    from .local import InProcess, ProcessPool

    workers = local_workers(cfg, n_batches, warm)
    return ProcessPool(cfg, ctx, ontology, workers) if workers > 1 else InProcess(cfg, ctx, ontology)
