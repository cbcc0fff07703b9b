"""A stopped `vistar score` exits as a shell reports a process the signal ended (128 + its number: 143 for
SIGTERM, 130 for Ctrl-C/SIGINT), says so last on standard error, and leaves run.json saying `interrupted`."""
import json
import signal

import pytest

from tests.support.live_cli import scene, start_cli, wait_for
from vistar.cli.exit_codes import interrupted_code
from vistar.engine.runmeta import Interrupted


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_score_exits_128_plus_the_signal(tmp_path, signum, code):
    scene(tmp_path)
    run = tmp_path / "run"
    proc = start_cli(tmp_path, run, sleep=0.5)  # 12 images at 0.5 s each: still scoring when the signal comes
    try:
        wait_for(lambda: (run / "run.json").exists() and json.loads((run / "run.json").read_text())["status"] == "running",
                 90, "the run to start")
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err.decode()[-2000:]
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "interrupted" and meta["interrupted"]["signal"] == signum.name
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith(f"interrupted by {signum.name}: ") and "rerun the same command" in last
    assert "Traceback" not in err.decode()


def test_interrupted_code_reads_the_signal_of_the_exception():
    assert interrupted_code(Interrupted(signal.SIGTERM)) == 128 + 15
    assert interrupted_code(Interrupted(signal.SIGHUP)) == 128 + 1
    assert interrupted_code(KeyboardInterrupt()) == 128 + 2
