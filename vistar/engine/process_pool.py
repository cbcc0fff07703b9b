"""The run's process pools: `forkserver` workers, and a worker's death that cannot race a submit.

CPython starts forkserver workers lazily, one per `submit`, inside the pool's `_shutdown_lock`. When a worker
dies, the pool's manager thread marks the pool broken and then walks its process table and its pending work to
terminate and fail them and close its call queue. On CPython 3.11 it does so without that lock, so a submit
that was starting a worker meanwhile adds to the table under the walk ("dictionary changed size during
iteration": the thread dies) or after the thread counted the workers to stop (the new worker is never told to
stop and the thread's join of it waits forever): the pool's shutdown, or the interpreter's exit, then waits
forever; or the start sends the fork server a queue closed under it (EBADF, "handle is closed"), which ends
the run. CPython 3.12
holds the lock for the whole of that step (python/cpython gh-109047). On 3.11 the pool here makes the step's
first action, marking the pool broken, wait for the lock: a submit in progress finishes first (its work and its
worker are in the tables before the walk), and every later submit sees the pool broken and raises
BrokenProcessPool before touching them. Nothing else changes: workers still start one per submit.
"""
from __future__ import annotations

import inspect
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import _ExecutorManagerThread
from typing import Callable


def break_holds_lock(manager: type) -> bool:
    """Whether MANAGER's `terminate_broken` marks the pool broken with the pool's lock already held: gh-109047
    split it into a locked `terminate_broken` around `_terminate_broken` (3.12 on), and a patch release taking the
    lock there in place would mention it in the method. Taking the (non-reentrant) lock again would deadlock."""
    if hasattr(manager, "_terminate_broken"):
        return True
    try:
        return "shutdown_lock" in inspect.getsource(getattr(manager, "terminate_broken"))
    except (OSError, TypeError):   # no source shipped: only the split tells
        return False


BREAK_HOLDS_LOCK = break_holds_lock(_ExecutorManagerThread)


class _BreakWaitsForSubmit(ProcessPoolExecutor):
    """ProcessPoolExecutor whose `_broken` (set by CPython 3.11's manager thread before it walks the process
    table) is set under the pool's `_shutdown_lock`, which every submit holds while it records work and starts
    a worker."""

    @property  # type: ignore[override]  # typeshed says bool; CPython stores the reason string
    def _broken(self) -> str | bool:
        reason: str | bool = self.__dict__.get("_broken_reason", False)
        return reason

    @_broken.setter
    def _broken(self, reason: str | bool) -> None:
        lock = self.__dict__.get("_shutdown_lock")
        if not reason or lock is None:  # __init__'s `False`: no submit yet
            self.__dict__["_broken_reason"] = reason
            return
        with lock:
            self.__dict__["_broken_reason"] = reason


def process_pool(workers: int, initializer: Callable[..., object], initargs: tuple[object, ...]) -> ProcessPoolExecutor:
    """A pool of WORKERS `forkserver` processes, each set up by INITIALIZER(*INITARGS)."""
    pool_type = ProcessPoolExecutor if BREAK_HOLDS_LOCK else _BreakWaitsForSubmit
    return pool_type(workers, mp_context=multiprocessing.get_context("forkserver"),
                     initializer=initializer, initargs=initargs)
