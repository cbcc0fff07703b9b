"""A stop signal that arrives while a pool starts a worker acts right after that step, never inside it (a worker
the pool had not yet recorded would start after the run ended and print a traceback under its last line).

Each case signals a fresh interpreter, never the test process: libraries an earlier test loaded in-process (Ray's
core worker among them) install their own C-level SIGTERM handlers there."""
import subprocess
import sys
import textwrap

HEADER = """
import os, signal
from vistar.engine.runmeta import Interrupted, sigterm_interrupts
from vistar.engine.signal_hold import held_signals
done = []
"""


def _run(body: str) -> str:
    code = HEADER + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_sigterm_inside_the_step_is_raised_after_it():
    assert _run("""
        with sigterm_interrupts():
            try:
                with held_signals():
                    os.kill(os.getpid(), signal.SIGTERM)
                    done.append("step finished")
                done.append("after the step")
            except Interrupted as stopped:
                done.append(f"interrupted by {signal.Signals(stopped.signum).name}")
        print(done)
    """) == "['step finished', 'interrupted by SIGTERM']"


def test_ctrl_c_inside_the_step_is_a_keyboard_interrupt_after_it():
    assert _run("""
        try:
            with held_signals():
                os.kill(os.getpid(), signal.SIGINT)
                done.append("step finished")
            done.append("after the step")
        except KeyboardInterrupt:
            done.append("keyboard interrupt")
        print(done)
    """) == "['step finished', 'keyboard interrupt']"


def test_handlers_are_restored_and_nothing_is_raised_without_a_signal():
    assert _run("""
        before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        with held_signals():
            done.append("step finished")
        print(done, {s: signal.getsignal(s) for s in before} == before)
    """) == "['step finished'] True"
