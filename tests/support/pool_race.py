"""Run as a script (`python -m tests.support.pool_race before|after`): a pool worker dies while a submit is
starting another worker, the start held open until the pool's manager thread has seen the death: `before` the
new worker is asked of the fork server (which is sent the pool's queues), or `after` it runs and before the
pool records it. Prints how both tasks ended and which workers outlived the pool's shutdown, then exits; a pool
that loses the race fails the start (`before`: a queue closed under it) or hangs (`after`) instead."""
import multiprocessing
import os
import sys
import time
from concurrent.futures import Future
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event

from tests.support.processes import alive
from vistar.engine.prefetch import _exit_with_parent
from vistar.engine.process_pool import process_pool

_EVENTS: tuple[Event, Event] | None = None


def _setup(parent: int, taken: Event, go: Event) -> None:
    global _EVENTS
    _exit_with_parent(parent)
    _EVENTS = (taken, go)


def _die_when_told() -> None:
    assert _EVENTS is not None
    taken, go = _EVENTS
    taken.set()
    go.wait()
    os._exit(1)


def _ending(future: Future) -> str:
    return type(future.exception()).__name__


def main(hold: str) -> None:
    ctx = multiprocessing.get_context("forkserver")
    taken, go = ctx.Event(), ctx.Event()
    pool = process_pool(2, _setup, (os.getpid(), taken, go))
    dies = pool.submit(_die_when_told)  # starts worker 1, the only one there to take it
    taken.wait()
    first = next(iter(pool._processes.values()))  # type: ignore[attr-defined]
    started = []
    plain_start = BaseProcess.start

    def wait_for_the_break() -> None:
        go.set()
        while alive(first.pid):
            time.sleep(0.01)
        time.sleep(1.0)  # the manager thread (woken by worker 1's death) handles the break meanwhile

    def held_start(process: BaseProcess) -> None:
        if hold == "before":
            wait_for_the_break()
        plain_start(process)  # worker 2 runs; the submit has yet to record it in the pool's process table
        started.append(process.pid)
        if hold == "after":
            wait_for_the_break()

    BaseProcess.start = held_start  # type: ignore[method-assign]
    try:
        second = pool.submit(time.sleep, 0)  # worker 1 is busy: starts worker 2
    finally:
        BaseProcess.start = plain_start  # type: ignore[method-assign]
    endings = [_ending(dies), _ending(second)]  # the second may have run on worker 2 before the break
    pool.shutdown()
    print("endings", *endings)
    print("left", *[pid for pid in [first.pid, *started] if alive(pid)])


if __name__ == "__main__":
    main(sys.argv[1])
