"""Decoding ahead of scoring: while batch n runs through the feature stages, batches n+1..n+depth decode.

With `--workers N` the images decode in N worker processes (`forkserver`, so workers never inherit the
model threads of this process: onnxruntime, torch); with no workers one background thread decodes (Pillow
and NumPy release the GIL while decoding, so it still overlaps the stages' compute). `depth` bounds how
many decoded batches wait in memory. Results come back in submission order, so what is scored, and in
which order, is exactly what a plain loop would do: prefetching changes when images decode, nothing else.

Workers end with the run: a `kill -9` of `vistar score` gives its workers no chance to be told, and they are
children of the forkserver, not of the run, so each watches the run's pid itself (`_exit_with_parent`) and
exits when it is gone; the forkserver and the resource tracker then see their last client close and exit too.
"""
from __future__ import annotations

import os
import select
import threading
import time
from collections import deque
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Iterable, Iterator, Self, TypeVar

import numpy as np

from .images import BIGGER, ImageError, load_rgb
from .process_pool import process_pool
from .signal_hold import held_signals

Decoded = np.ndarray | ImageError   # an image's pixels, or why its file cannot be scored
Decoder = Callable[[Path, int], Decoded]
T = TypeVar("T")
R = TypeVar("R")


def decode_image(path: Path, max_pixels: int, bigger: str = BIGGER) -> Decoded:
    """The decoded HxWx3 uint8 RGB array, or the ImageError saying why it cannot be (never raises); `bigger`: how
    the user gets past max_pixels (`images.load_rgb`)."""
    try:
        return load_rgb(path, max_pixels, bigger)
    except ImageError as exc:
        return exc
    except Exception as exc:  # a decoder bug must not end the run
        return ImageError(f"cannot decode image: {type(exc).__name__}: {exc}")


def _exit_with_parent(pid: int) -> None:
    """Worker initializer: a daemon thread that ends this worker as soon as process `pid` (the run) has exited."""
    threading.Thread(target=_watch, args=(pid,), name="vistar-parent-watch", daemon=True).start()


def _watch(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)  # readable once `pid` exits; immune to pid reuse (Linux >= 5.3)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        select.select([fd], [], [])
    else:
        while _alive(pid):
            time.sleep(0.5)
    os._exit(1)


def _alive(pid: int) -> bool:
    """`pid` exists and is not a zombie (a killed parent stays a zombie until its own parent reaps it)."""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except ProcessLookupError:
        return False
    except OSError:  # no /proc (not Linux): existence is all we can tell
        return True


class PoolOwner:
    """A pool opened by `with` and shut down on leaving it, queued work cancelled: the decode prefetcher's and
    the local executor's, which also rebuild theirs through `_new_pool` when a worker dies."""

    pool: Executor | None = None

    def _new_pool(self) -> Executor | None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.pool = self._new_pool()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None

    def _alone(self, fn: Callable[..., R], *args: object) -> R | None:
        """FN(*ARGS) run alone in the pool after a worker died (killed for memory, say) and took down everything
        queued with it: on a broken pool (submit refuses, or this task kills a fresh one) the pool is rebuilt and
        the task tried once more. None when it broke a pool both times: only a task that kills a worker by itself
        is given up."""
        for _ in range(2):
            pool = self.pool
            assert pool is not None   # callers without a pool run the task in their own process
            try:
                with held_signals():  # submit may start a worker: see signal_hold
                    return pool.submit(fn, *args).result()
            except BrokenProcessPool:
                pool.shutdown(cancel_futures=True)
                self.pool = self._new_pool()
        return None


class Prefetcher(PoolOwner):
    """`prefetcher.batches(batches, paths_of)` yields `(batch, images)` in order, decoding up to `depth` batches ahead.

    `decode(path, max_pixels)` must be a module-level function (worker processes import it by name)."""

    def __init__(self, workers: int, max_pixels: int, depth: int = 2, decode: Decoder | None = None):
        self.workers, self.max_pixels, self.depth = max(0, workers), max_pixels, max(0, depth)
        self.decode = decode or decode_image
        self.pool = None

    def _new_pool(self) -> Executor | None:
        if self.workers > 0:
            return process_pool(self.workers, _exit_with_parent, (os.getpid(),))
        if self.depth > 0:
            return ThreadPoolExecutor(1, thread_name_prefix="vistar-decode")
        return None

    def _submit(self, path: Path) -> Future[Decoded] | Path:
        if self.pool is None:  # no prefetch, no workers: decode when the batch is needed
            return path
        try:
            with held_signals():  # submit may start a worker: see signal_hold
                return self.pool.submit(self.decode, path, self.max_pixels)
        except BrokenProcessPool as exc:  # a worker died after earlier batches were queued: retried alone later
            failed: Future[Decoded] = Future()
            failed.set_exception(exc)
            return failed

    def _result(self, path: Path, pending: Future[Decoded] | Path) -> Decoded:
        if not isinstance(pending, Future):
            return self.decode(path, self.max_pixels)
        try:
            return pending.result()
        except BrokenProcessPool:
            return self._retry_alone(path)

    def _retry_alone(self, path: Path) -> Decoded:
        """A worker died and every image queued in its pool failed with it: each is decoded again alone
        (PoolOwner._alone), so only an image that kills a worker by itself becomes an error."""
        if self.pool is None:   # only a pool's futures fail this way; without one, decode here
            return self.decode(path, self.max_pixels)
        decoded = self._alone(self.decode, path, self.max_pixels)
        return ImageError("the decoding worker process died on this image (out of memory?)") if decoded is None else decoded

    def batches(self, batches: Iterable[list[T]],
                paths_of: Callable[[list[T]], list[Path]]) -> Iterator[tuple[list[T], list[Decoded]]]:
        source = iter(batches)
        queued: deque[tuple[list[T], list[Path], list[Future[Decoded] | Path]]] = deque()  # oldest first

        def queue_next() -> bool:
            batch = next(source, None)
            if batch is None:
                return False
            paths = paths_of(batch)
            queued.append((batch, paths, [self._submit(p) for p in paths]))
            return True

        while queued or queue_next():
            batch, paths, pending = queued.popleft()
            while len(queued) < self.depth and queue_next():  # keep `depth` batches decoding behind this one
                pass
            yield batch, [self._result(p, f) for p, f in zip(paths, pending)]
