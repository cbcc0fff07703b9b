"""The local executors: today's loop in this process, and the same batches over a pool of processes.

The pool (`--cpu-workers N`) exists because every CPU stage (OCR, shadows, faces, pose, panels, GC cues) and every
metric runs on one core in one process: N `forkserver` workers, one thread each, each decode and score whole
batches (its models loaded once per worker). Batches are submitted in order with at most 2N in flight and their
rows are handed back in submission order, so the store receives exactly the rows, in exactly the order, of the
single-process loop. A worker killed mid-batch (out of memory, a `kill -9`) breaks the pool: the pool is rebuilt
and each batch it took down is scored again alone, so only a batch that kills a worker by itself ends as error rows.

One thread per worker means every library: OpenMP and BLAS (`work.SINGLE_THREAD_ENV`), onnxruntime (its sessions
are built with one thread) and OpenCV, whose own thread pool would otherwise take every core in every worker.
The workers' fork server starts when the run starts (`start_forkserver`), not when the pool does: it imports the
engine once, in that one-thread environment, on a core the planning process leaves idle, and each worker forks
from it with the engine imported instead of importing it itself.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import sys
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Iterable, Iterator

from ...api import StageContext
from ...ontology import Ontology
from ...runtime.scoped import scoped_entries
from ..batch import score_batch
from ..plan import Batch, Row
from ..prefetch import Decoder, PoolOwner, Prefetcher, _exit_with_parent
from ..process_pool import process_pool
from ..signal_hold import held_signals
from .work import SINGLE_THREAD_ENV, BatchReport, BatchWorker, WorkerSetup, _failed_rows, absorb, pack, single_thread_env
from .workers import ExecutorOptions, local_workers


class InProcess:
    """Decode ahead (`--workers`, `--prefetch`) and score each batch in this process: the default for small runs."""

    name = "local"

    def __init__(self, cfg: ExecutorOptions, ctx: StageContext, ontology: Ontology, decode: Decoder | None = None):
        """`decode(source, max_pixels)`: what reads a record's `path` (default: the file's decoder)."""
        self.cfg, self.ctx, self.ontology = cfg, ctx, ontology
        self.stage_seconds: dict[str, float] = {}
        self.startup: dict[str, float] = {}
        self.workers = 1
        self.prefetcher = Prefetcher(cfg.workers, cfg.max_pixels, cfg.prefetch, decode)

    def __enter__(self) -> InProcess:
        self.prefetcher.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.prefetcher.__exit__(*exc)

    def score(self, batches: Iterable[Batch]) -> Iterator[tuple[Batch, list[Row]]]:
        for batch, images in self.prefetcher.batches(batches, lambda b: [g[0].record.path for g in b]):
            yield batch, score_batch(batch, images, self.ctx, self.ontology, timings=self.stage_seconds)


def may_use_pool(cfg: ExecutorOptions, warm: bool) -> bool:
    """Whether this run may score over a pool: `local_workers` for a run with as many batches as it could use
    (it decides for the real count once the run is planned)."""
    return local_workers(cfg, sys.maxsize, warm) > 1


def start_forkserver() -> None:
    """Start the fork server the pool's workers come from, with the engine imported in the workers' one-thread
    environment (this process's environment is left as it was). A no-op when it already runs."""
    multiprocessing.get_context("forkserver").set_forkserver_preload([__name__])
    with scoped_entries(os.environ, SINGLE_THREAD_ENV):
        multiprocessing.forkserver.ensure_running()


_WORKER: BatchWorker | None = None


def _start_worker(parent: int, setup: bytes) -> None:
    """Pool initializer: single-threaded libraries first (a fork server started elsewhere did not set them),
    then the run's setup."""
    global _WORKER
    single_thread_env()
    _exit_with_parent(parent)
    _WORKER = BatchWorker(pickle.loads(setup))


def _score_in_worker(packed: bytes) -> BatchReport:
    if _WORKER is None:
        raise RuntimeError("a pool worker scores only after its initializer ran")
    return _WORKER.score(packed)


class ProcessPool(PoolOwner):
    """`--cpu-workers N` (N >= 2) processes scoring whole batches; rows come back in the order batches went in."""

    name = "local"

    def __init__(self, cfg: ExecutorOptions, ctx: StageContext, ontology: Ontology, workers: int):
        self.ctx, self.workers = ctx, workers
        self.setup = pickle.dumps(WorkerSetup.of_run(cfg, ctx, ontology))
        self.stage_seconds: dict[str, float] = {}
        self.startup: dict[str, float] = {}
        self.pool: ProcessPoolExecutor | None = None

    def _new_pool(self) -> ProcessPoolExecutor:
        return process_pool(self.workers, _start_worker, (os.getpid(), self.setup))

    def score(self, batches: Iterable[Batch]) -> Iterator[tuple[Batch, list[Row]]]:
        queued: deque[tuple[Batch, bytes, Future[BatchReport] | None]] = deque()
        for batch in batches:
            packed = pack(batch)
            queued.append((batch, packed, self._submit(packed)))
            if len(queued) >= 2 * self.workers:
                yield self._collect(*queued.popleft())
        while queued:
            yield self._collect(*queued.popleft())

    def _submit(self, packed: bytes) -> Future[BatchReport] | None:
        if self.pool is None:
            raise RuntimeError("the pool scores inside its `with` block")
        try:
            with held_signals():  # submit may start a worker: see signal_hold
                return self.pool.submit(_score_in_worker, packed)
        except BrokenProcessPool:  # a worker died after earlier batches were queued: this one is retried alone
            return None

    def _collect(self, batch: Batch, packed: bytes, future: Future[BatchReport] | None) -> tuple[Batch, list[Row]]:
        try:
            if future is None:
                raise BrokenProcessPool("pool broken before submission")
            report = future.result()
        except BrokenProcessPool:
            report = self._retry_alone(packed)
        absorb(report, self.ctx, self.stage_seconds)
        return batch, report.rows

    def _retry_alone(self, packed: bytes) -> BatchReport:
        if self.pool is None:
            self.pool = self._new_pool()
        report = self._alone(_score_in_worker, packed)
        if report is None:
            return BatchReport(_failed_rows(pickle.loads(packed), "the scoring worker process died on this batch "
                                            "(killed, out of memory, or it could not start)"))
        return report
