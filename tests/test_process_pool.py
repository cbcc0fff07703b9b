"""The run's process pools: a worker's death while a submit starts another worker ends in a broken pool, every
task failed with BrokenProcessPool and every worker stopped, never in a hang (CPython 3.11's race, see
vistar/engine/process_pool.py)."""
import os
import subprocess
import sys

import pytest

from tests.support.live_cli import REPO

HANG_GUARD_S = 120  # the scenario takes seconds; a pool that lost the race never returns


@pytest.mark.parametrize("hold", ["before", "after"])
def test_a_worker_dying_while_a_submit_starts_another_breaks_the_pool_without_a_hang(hold):
    cmd = [sys.executable, "-m", "tests.support.pool_race", hold]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the pool hung after its worker died; stderr:\n{exc.stderr}")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr  # e.g. the manager thread's "dictionary changed size"
    endings, left = done.stdout.splitlines()
    assert endings in ("endings BrokenProcessPool BrokenProcessPool", "endings BrokenProcessPool NoneType"), endings
    assert left == "left", left  # no worker outlived the pool


def test_the_lock_is_taken_only_where_the_manager_thread_does_not_hold_it_already():
    from vistar.engine.process_pool import break_holds_lock

    class Split:                      # 3.12 on: a locked terminate_broken around _terminate_broken
        def terminate_broken(self, cause): ...
        def _terminate_broken(self, cause): ...

    class LockedInPlace:              # a patch release taking the lock inside terminate_broken
        def terminate_broken(self, cause):
            with self.shutdown_lock:
                self.executor._broken = "broken"

    class Unlocked:                   # 3.11: marks the pool broken without the lock
        def terminate_broken(self, cause):
            self.executor._broken = "broken"

    assert break_holds_lock(Split) and break_holds_lock(LockedInPlace) and not break_holds_lock(Unlocked)
