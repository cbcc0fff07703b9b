"""Executors: how `vistar score` turns its planned batches of jobs into rows (docs/engine.md, docs/scaling.md).

All of them share the planner, the stage and metric functions (`score_batch`) and the store: the runner plans,
hands the executor batches in a fixed order and writes the rows it yields. They differ only in where a batch runs:

- `local`, one worker: decode ahead and score in this process (today's loop);
- `local`, `--cpu-workers N` >= 2: N single-threaded processes on this machine (`local.ProcessPool`);
- `ray`: a Ray Data pipeline over actors on a Ray cluster, or on a Ray instance started on this machine.
"""
from __future__ import annotations

import os

EXECUTORS = ("local", "ray")
BATCHES_PER_WORKER = 2   # the pool pays a model load per worker: with the default worker count, runs this short stay in-process


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, which a container or `taskset` narrows), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def local_workers(cfg, n_batches: int, warm: bool) -> int:
    """Processes the local executor uses. An explicit `--cpu-workers` is obeyed; the default (usable cores) applies
    to CPU runs long enough to pay a model load per worker; on a GPU every worker would hold its own copy of the
    models, so a GPU run stays in one process unless asked. `vistar bench` (warm models) always runs in-process."""
    if warm:
        return 1
    if cfg.cpu_workers is not None:
        return max(1, min(cfg.cpu_workers, n_batches or 1))
    if cfg.device != "cpu" or n_batches < BATCHES_PER_WORKER * 2:
        return 1
    return max(1, min(usable_cores(), n_batches // BATCHES_PER_WORKER))


def open_executor(cfg, ctx, ontology, n_batches: int, warm: bool = False):
    """The executor for this run, as a context manager whose `score(batches)` yields `(batch, rows)` in order."""
    if cfg.executor == "ray":
        from .ray_exec import RayExecutor

        return RayExecutor(cfg, ctx, ontology, n_batches)
    if cfg.executor != "local":
        raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}, got {cfg.executor!r}")
    from .local import InProcess, ProcessPool

    workers = local_workers(cfg, n_batches, warm)
    return ProcessPool(cfg, ctx, ontology, workers) if workers > 1 else InProcess(cfg, ctx, ontology)
