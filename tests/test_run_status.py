"""run.json's status matches the exit code: exit 4 says `nothing_scored` and why (never `complete`), and a run the
system fails (a full disk, a read-only folder) exits 5, says `failed` with the error, and resumes to the rows an
uninterrupted run writes."""
import errno
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support import engine_plugins, unprivileged
from tests.support.run_inputs import png, prompts
from vistar.cli import app
from vistar.cli.exit_codes import ExitCode
from vistar.engine import runmeta
from vistar.engine.runmeta import mark_failed, run_status_notes
from vistar.engine.store import ResultStore, read_scores


@pytest.fixture
def fake(monkeypatch):
    engine_plugins.install(monkeypatch)


def score(images: Path, prompt_file: Path, out: Path, *extra: str):
    res = CliRunner().invoke(app, ["score", str(images), "--prompts", str(prompt_file), "--out", str(out),
                                   "--cpu-workers", "1", "--batch-size", "1", *extra])
    assert "Traceback" not in res.output, res.output
    return res


def meta(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


def rows(run: Path):
    """The visible rows, in a fixed order, without the store-internal shard number."""
    frame = read_scores(run).drop(columns=["shard"])
    return frame.sort_values(["model", "prompt_id", "sample", "metric"]).reset_index(drop=True)


@pytest.mark.parametrize("lines, extra, says", [
    ([], (), "holds no prompt"),
    (['zz: [GD|TR] "A"'], (), "no image matched a prompt"),
    (['a: [GD|TR] "A"'], ("--angles", "LI"), "no prompt has the requested angle(s) LI"),
])
def test_exit_4_leaves_a_run_json_that_says_why_nothing_was_scored(tmp_path, fake, lines, extra, says):
    png(tmp_path / "imgs" / "m" / "a.png")
    res = score(tmp_path / "imgs", prompts(tmp_path / "p.vistar", lines), tmp_path / "run", *extra)
    assert res.exit_code == ExitCode.NOTHING_SCORED, res.output
    record = meta(tmp_path / "run")
    assert record["status"] == "nothing_scored" and says in record["nothing_scored"]
    assert res.output.strip().splitlines()[-1] == f"error: nothing to score: {record['nothing_scored']}"
    assert run_status_notes(tmp_path / "run") == [
        f"The run scored nothing (run.json status: 'nothing_scored'): {record['nothing_scored']}."]


@pytest.mark.slow
def test_a_shard_that_held_no_image_merges_without_partial_and_an_empty_merge_says_so(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    codes = [score(tmp_path / "imgs", p, tmp_path / f"s{k}", "--shard", f"{k}/2").exit_code for k in (1, 2)]
    assert sorted(codes) == [ExitCode.OK, ExitCode.NOTHING_SCORED]  # one image: one shard has nothing
    empty = tmp_path / f"s{codes.index(ExitCode.NOTHING_SCORED) + 1}"
    merged = CliRunner().invoke(app, ["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "all")])
    assert merged.exit_code == ExitCode.OK and meta(tmp_path / "all")["status"] == "complete", merged.output
    alone = CliRunner().invoke(app, ["merge", str(empty), "--partial", "--out", str(tmp_path / "none")])
    assert alone.exit_code == ExitCode.NOTHING_SCORED, alone.output
    assert meta(tmp_path / "none")["status"] == "nothing_scored"


@pytest.mark.slow
def test_disk_full_mid_run_exits_5_says_failed_and_the_rerun_finishes_it(tmp_path, fake, monkeypatch):
    for name in "abcd":
        png(tmp_path / "imgs" / "m" / f"{name}.png", colour=(ord(name), 20, 30))
    p = prompts(tmp_path / "p.vistar", [f'{n}: [GD|TR] "A"' for n in "abcd"])
    assert score(tmp_path / "imgs", p, tmp_path / "whole").exit_code == ExitCode.OK
    real_write, writes = ResultStore._write_table, []

    def fills_up(self, table, folder):
        writes.append(len(table))
        if len(writes) == 3:   # two batches are stored, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device", str(folder / "part-x.parquet"))
        return real_write(self, table, folder)
    monkeypatch.setattr(ResultStore, "_write_table", fills_up)
    res = score(tmp_path / "imgs", p, tmp_path / "run")
    assert res.exit_code == ExitCode.IO_FAILURE == 5, res.output
    record = meta(tmp_path / "run")
    assert record["status"] == "failed" and "[Errno 28] No space left on device" in record["failed"]["error"]
    last = " ".join(res.output.split())  # the message is one line; the test terminal may wrap it
    assert "No space left on device" in last and f"{tmp_path / 'run' / 'run.json'} says failed" in last
    assert "rerun the same command" in last
    assert len(read_scores(tmp_path / "run")) == 4  # the two stored batches (TR and TR.odd of two images) stay
    monkeypatch.setattr(ResultStore, "_write_table", real_write)
    again = score(tmp_path / "imgs", p, tmp_path / "run")
    assert again.exit_code == ExitCode.OK and "4 already in" in again.output, again.output
    assert meta(tmp_path / "run")["status"] == "complete"
    assert rows(tmp_path / "run").equals(rows(tmp_path / "whole"))


def test_run_json_says_failed_even_when_no_new_file_fits_on_the_disk(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"status": "running", "command": "vistar score"}))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(runmeta, "write_text_atomic", full)
    said = mark_failed(path, OSError(errno.ENOSPC, "No space left on device"))
    assert said == f"{path} says failed"
    assert json.loads(path.read_text())["failed"]["error"] == "[Errno 28] No space left on device"


@pytest.mark.slow
def test_a_real_read_only_folder_exits_5_and_resumes_once_writable(tmp_path):
    """File permissions, not a mock: the live generation folder is made read-only between two runs, so the second
    cannot store its rows. Run in a child bound by permissions even as root (tests/support/unprivileged.py)."""
    images, p = tmp_path / "imgs", prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B"'])
    png(images / "m" / "a.png", colour=(200, 10, 10))

    def vistar(out: Path):
        return unprivileged.python("-m", "tests.support.engine_plugins", "score", str(images), "--prompts", str(p),
                                   "--out", str(out), "--cpu-workers", "1")
    assert vistar(tmp_path / "run").returncode == ExitCode.OK
    png(images / "m" / "b.png", colour=(10, 200, 10))
    live = ResultStore(tmp_path / "run", writable=False).dir
    live.chmod(0o555)
    try:
        failed = vistar(tmp_path / "run")
    finally:
        live.chmod(0o755)
    assert failed.returncode == ExitCode.IO_FAILURE, failed.stdout + failed.stderr
    record = meta(tmp_path / "run")
    assert record["status"] == "failed" and "[Errno 13]" in record["failed"]["error"]  # EACCES, worded by pyarrow
    assert vistar(tmp_path / "run").returncode == ExitCode.OK
    assert vistar(tmp_path / "whole").returncode == ExitCode.OK
    assert rows(tmp_path / "run").equals(rows(tmp_path / "whole"))


@pytest.mark.slow
def test_an_out_folder_that_cannot_be_created_exits_5_and_writes_nothing(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    child = unprivileged.python("-m", "tests.support.engine_plugins", "score", str(tmp_path / "imgs"), "--prompts", str(p),
                                "--out", str(locked / "run"))
    assert child.returncode == ExitCode.IO_FAILURE, child.stdout + child.stderr
    assert "Permission denied" in child.stderr and not any(locked.iterdir())


def test_a_full_device_no_command_handles_exits_5_naming_the_file():
    """/dev/full refuses every write with ENOSPC: a real full disk for any command's output."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    res = CliRunner().invoke(app, ["suite", "export", "core", "--out", "/dev/full"])
    assert res.exit_code == ExitCode.IO_FAILURE, res.output
    assert "Traceback" not in res.output and "No space left on device" in res.output


@pytest.mark.slow
def test_a_report_into_a_read_only_folder_exits_5(tmp_path):
    from tests.support.scores_builder import row, write_run

    run = write_run(tmp_path / "run", [row("m1", "p1", "TR", 0.5)])
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    child = unprivileged.python("-c", "from vistar.cli import main; main()", "report", str(run), "--out", str(locked / "report"))
    assert child.returncode == ExitCode.IO_FAILURE, child.stdout + child.stderr
    assert "Permission denied" in child.stderr and not any(locked.iterdir())
