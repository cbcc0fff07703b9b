"""The terminal contract of docs/cli.md: messages are never hard-wrapped, whatever the width; the caret under an
escaped prompt line points at the escaped column; a closed pipe is not a "findings" result."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from rich.cells import cell_len

from tests.support.scores_builder import TWO_ANGLE_JUDGMENTS, two_angle_rows, write_run
from vistar.cli.common import printable
from vistar.cli.exit_codes import PIPE_CLOSED

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
VISTAR = "import sys; from vistar.cli import main; sys.argv[0] = 'vistar'; main()"


def vistar(*args: str, columns: int = 80, **kw) -> subprocess.CompletedProcess:
    """The command line in a child process whose terminal is COLUMNS wide (rich reads the width from there)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-c", VISTAR, *args], env=env, capture_output=True, text=True,
                          timeout=300, **kw)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """A run with TR and LI scored on two prompts and two raters' judgments."""
    folder = tmp_path_factory.mktemp("calibrate")
    run = write_run(folder / "a-run-folder-with-a-name-long-enough-to-wrap", two_angle_rows())
    judged = TWO_ANGLE_JUDGMENTS + [(a, b, p, "r2", angle) for a, b, p, _, angle in TWO_ANGLE_JUDGMENTS]
    pd.DataFrame(judged, columns=["image_a", "image_b", "preferred", "rater", "angle"]).to_csv(folder / "pairs.csv", index=False)
    return run, folder / "pairs.csv"


@pytest.mark.parametrize("columns", [60, 40])
def test_calibrate_lines_are_never_hard_wrapped(calibrated, columns):
    run, pairs = calibrated
    res = vistar("calibrate", str(run), "--pairs", str(pairs), "--resamples", "100", columns=columns)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    wrote = [line for line in lines if line.startswith("wrote ")]
    assert len(wrote) == 1, res.stdout
    written = wrote[0].removeprefix("wrote ").split(", ")
    assert len(written) >= 2 and all(Path(path).parent == run / "calibration" and Path(path).is_file() for path in written)
    alpha = [line for line in lines if line.startswith("Krippendorff's α")]
    assert alpha == ["Krippendorff's α over 2 raters and 4 units (pair, angle, role): nominal 1.000, ordinal 1.000"]


REPORT = {"fingerprint": {"device": "cpu", "hardware": {"machine": "x86_64", "cpu_count": 2}, "random_init": False},
          "stages": [], "metrics": [],
          "naive_vs_engine": {"images": 12, "rows": {"ok": 24}, "stage_calls": {"naive": 24, "engine": 12},
                              "naive_s": 3.5, "naive_steady_ips": 3.1, "engine_end_to_end_s": 2.0,
                              "engine_steady_ips": 7.9, "engine_batch": 8, "speedup": 1.75}}


@pytest.mark.parametrize("columns", [60, 40])
def test_bench_naive_loop_vs_engine_lines_are_never_hard_wrapped(columns):
    from vistar.cli.bench_cmd import naive_vs_engine_lines

    code = f"import json; from vistar.cli.bench_cmd import _print; _print(json.loads({json.dumps(json.dumps(REPORT))}))"
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": str(columns)}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    expected = naive_vs_engine_lines(REPORT["naive_vs_engine"])
    assert all(len(line) > columns for line in expected[:3])  # each would have wrapped
    assert [line for line in res.stdout.splitlines() if line in expected] == expected


def test_the_caret_under_an_escaped_line_points_at_the_escaped_column(tmp_path):
    """Escape bytes, a bidi override, CJK (two cells each) and a combining accent before the error: the caret
    stands under the character the parser names, as the line is printed (escaped)."""
    line = 'a: [GD|TR] \x1b[31m漢字 cafe\u0301 \u202e sign {text="x" 7}'
    (tmp_path / "p.vistar").write_text(line + "\n", encoding="utf-8")
    res = vistar("dsl", "check", str(tmp_path / "p.vistar"))
    assert res.returncode == 1, res.stderr
    err = res.stderr.splitlines()
    shown = next(i for i, text in enumerate(err) if text.startswith("  a: [GD|TR]"))
    assert err[shown] == "  " + printable(line)  # escaped, not raw
    caret = err[shown + 1]
    column = line.index(" 7}") + 1   # 0-based index of '7'
    # where '7' is drawn: the terminal cells of everything printed before it
    assert caret == " " * cell_len("  " + printable(line[:column])) + "^"


@pytest.mark.parametrize("args", [["suite", "show", "core"], ["suite", "export", "core"], ["models", "list", "--json"]])
def test_a_reader_that_closes_the_pipe_is_not_a_findings_result(args):
    """`vistar suite show core | head -1`: exit 141 (128 + SIGPIPE, as a shell reports it), nothing on stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", VISTAR, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()   # the reader is gone before the first line is written
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == PIPE_CLOSED == 141
    assert err == b""


def test_head_minus_one_of_suite_show_through_a_shell():
    res = subprocess.run(["bash", "-o", "pipefail", "-c", f"{sys.executable} -c \"{VISTAR}\" suite show core | head -1"],
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    assert res.stdout.startswith("core ") and res.stderr == ""
    assert res.returncode in (0, PIPE_CLOSED)   # 0 when the whole table fit the pipe before head closed it
