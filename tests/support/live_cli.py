"""A `vistar score` child process with the fake stage (tests.support.engine_plugins) slowed per image, for tests
that signal, kill or race a run while it works."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[2]


def scene(folder: Path, n: int = 12) -> Path:
    for i in range(n):
        (folder / "imgs" / "m1").mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (12, 12), (i * 20, 40, 90)).save(folder / "imgs" / "m1" / f"p{i}.png")
    (folder / "p.vistar").write_text("".join(f'p{i}: [GD|TR] "{i}"\n' for i in range(n)))
    return folder / "p.vistar"


def start_cli(folder: Path, run: Path, *extra: str, sleep: float = 1.0) -> subprocess.Popen:
    env = {**os.environ, "VISTAR_TEST_SLEEP": str(sleep), "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "tests.support.engine_plugins", "score", str(folder / "imgs"), "--prompts", str(folder / "p.vistar"),
           "--out", str(run), "--batch-size", "1", *extra]
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")
