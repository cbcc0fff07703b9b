"""The three examples of docs/api.md and the README's "From Python" example run as written, from the repository
root, and print what they say they do."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def examples() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(), re.S)
    assert len(blocks) == 3, "docs/api.md has three examples"
    return blocks


def run(code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_pil_images_example():
    lines = run(examples()[0])
    assert [line.split()[:3] for line in lines] == [["0", "TR", "ok"], ["1", "TR", "ok"], ["2", "TR", "ok"]]
    assert lines[0].split()[3] == "1.000"   # the sharp poster reads exactly


def test_tensor_loop_example():
    pytest.importorskip("torch")
    lines = run(examples()[1])
    assert [line.split(" ", 1)[0] for line in lines] == ["0", "1"]
    assert lines[0].split(" ", 1)[1] == lines[1].split(" ", 1)[1]   # the same pixels, the same scores, step after step


def test_accumulate_example():
    lines = run(examples()[2])
    assert lines[0].split() == ["model", "overall", "rank"] and lines[1].split()[0] == "sharp" and lines[1].split()[2] == "1"


def test_readme_example():
    readme = (ROOT / "README.md").read_text()
    section = re.search(r"^## From Python\n(.*?)(?=^## )", readme, re.S | re.M).group(1)
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    score, recognised = run(code)[0].split(" ", 1)
    assert 0.9 < float(score) < 1.0 and recognised == "grand omening"
