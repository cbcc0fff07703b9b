"""A stop signal that arrives while a pool starts a worker acts right after that step, never inside it (a worker
the pool had not yet recorded would start after the run ended and print a traceback under its last line)."""
import os
import signal

import pytest

from vistar.engine.runmeta import Interrupted, sigterm_interrupts
from vistar.engine.signal_hold import held_signals


def test_sigterm_inside_the_step_is_raised_after_it():
    done = []
    with sigterm_interrupts():
        with pytest.raises(Interrupted) as stopped:
            with held_signals():
                os.kill(os.getpid(), signal.SIGTERM)
                done.append("the step finished")
            done.append("after the step")
    assert done == ["the step finished"]
    assert stopped.value.signum == signal.SIGTERM


def test_ctrl_c_inside_the_step_is_a_keyboard_interrupt_after_it():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with held_signals():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("the step finished")
    assert done == ["the step finished"]


def test_handlers_are_restored_and_nothing_is_raised_without_a_signal():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with held_signals():
        pass
    assert {s: signal.getsignal(s) for s in before} == before
