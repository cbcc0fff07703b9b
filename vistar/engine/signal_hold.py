"""Steps a stop signal must not cut in half.

A process pool starts a worker inside `submit`: the run asks the fork server for a child and waits for its pid.
A SIGTERM or Ctrl-C raised there unwinds the run before the pool has recorded the child, so the pool's shutdown
never waits for it; the child starts after the run has exited, finds the pool's semaphores gone and prints a
traceback below the run's last line. `held_signals()` lets such a step finish and then delivers the signal as it
would have been delivered (the run's own handler, or Python's KeyboardInterrupt), right after the step.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Any, Callable, Iterator, Union

_HELD = (signal.SIGINT, signal.SIGTERM)
_Handler = Union[Callable[[int, Union[FrameType, None]], Any], int, signal.Handlers, None]


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """Within: SIGINT and SIGTERM are recorded, not acted on; on leaving, the first one recorded is acted on.
    Only the main thread takes signals; elsewhere this changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous: dict[int, _Handler] = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum))
                                   for signum in _HELD}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            _deliver(caught[0], previous[caught[0]])


def _deliver(signum: int, handler: _Handler) -> None:
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)
