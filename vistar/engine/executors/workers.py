"""How many processes a run uses: the cores it may run on, and the local executor's worker count."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol


class ExecutorOptions(Protocol):
    """What the executors read of the run's configuration (runner.ScoreConfig, which imports them)."""

    @property
    def executor(self) -> str: ...        # local or ray
    @property
    def device(self) -> str: ...
    @property
    def cpu_workers(self) -> int | None: ...
    @property
    def workers(self) -> int: ...         # decoding processes
    @property
    def prefetch(self) -> int: ...
    @property
    def max_pixels(self) -> int: ...
    @property
    def ray_address(self) -> str | None: ...
    @property
    def out(self) -> Path: ...            # the run folder (Ray's log lines go there)


BATCHES_PER_WORKER = 2   # the pool pays a model load per worker: with the default worker count, runs this short stay in-process


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, which a container or `taskset` narrows), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def local_workers(cfg: ExecutorOptions, n_batches: int, warm: bool) -> int:
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
