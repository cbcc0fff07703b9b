"""`vistar score` exit codes (docs/cli.md): one test per code, the reason a run had nothing to score, options
checked before anything is written, and the end-of-run summary of what was not scored."""
import json

import pytest

from tests.support import engine_plugins
from tests.support.run_inputs import png, prompts
from tests.support.score_cli import last_line, score
from vistar.cli.exit_codes import ExitCode
from vistar.engine.store import read_scores


@pytest.fixture
def fake(monkeypatch):
    engine_plugins.install(monkeypatch)
    return engine_plugins


def test_complete_run_exits_0_and_says_so_last(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"']))
    assert res.exit_code == ExitCode.OK == 0, res.output
    assert last_line(res) == "complete (rows: 2 ok)"


def test_error_rows_exit_3_with_counts_and_partial_ok_exits_0(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    png(tmp_path / "imgs" / "m" / "b.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B" {stage="fail"}'])
    res = score(tmp_path, tmp_path / "imgs", p)
    assert res.exit_code == ExitCode.PARTIAL == 3, res.output
    # b's stage fails: both of its metrics are error rows, a's two are ok
    assert last_line(res) == "partial: 2 error rows, 0 invalid prompts (rows: 2 error, 2 ok); exit 3"
    again = score(tmp_path, tmp_path / "imgs", p, "--partial-ok")  # resumed: the error rows are still there
    assert again.exit_code == 0 and last_line(again) == "partial: 2 error rows, 0 invalid prompts (rows: 2 error, 2 ok); exit 0"


def test_an_invalid_prompt_alone_makes_the_run_partial(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B" {']))
    assert res.exit_code == 3 and last_line(res) == "partial: 0 error rows, 1 invalid prompt (rows: 2 ok); exit 3"


@pytest.mark.parametrize("lines, reason", [
    ([], "holds no prompt (empty, or only blank and # comment lines)"),
    (["# only a comment", ""], "holds no prompt"),
    (["a [GD|TR] no colon", "b: [GD|TR] x {"], "no prompt of"),  # nothing parses
])
def test_no_usable_prompt_exits_4_naming_why(tmp_path, fake, lines, reason):
    png(tmp_path / "imgs" / "m" / "a.png")
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", lines))
    assert res.exit_code == ExitCode.NOTHING_SCORED == 4, res.output
    assert last_line(res).startswith("error: nothing to score: ") and reason in last_line(res)


def test_images_laid_out_flat_exit_4_showing_the_expected_layout(tmp_path, fake):
    png(tmp_path / "imgs" / "a.png")  # IMAGES/a.png instead of IMAGES/<model>/a.png
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"']))
    assert res.exit_code == 4
    assert f"no image matched a prompt: expected {tmp_path / 'imgs'}/<model>/<prompt-id>.png" in last_line(res)
    assert "1 image file(s) match no prompt id" in last_line(res)


def test_no_prompt_with_the_requested_angle_exits_4_listing_the_angles_there_are(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"']), "--angles", "li")
    assert res.exit_code == 4
    assert last_line(res).endswith("no prompt has the requested angle(s) LI; the prompts' angles: TR (1)")


def test_resuming_a_finished_run_is_not_nothing_to_score(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    assert score(tmp_path, tmp_path / "imgs", p).exit_code == 0
    again = score(tmp_path, tmp_path / "imgs", p)
    assert again.exit_code == 0 and "scored 0 rows (nothing new); 2 already in" in again.output


@pytest.mark.parametrize("extra, message", [
    (["--angles", "XX"], "--angles: unknown angle code(s) XX"),
    (["--angles", "TR,,li,xx"], "unknown angle code(s) xx"),
    (["--device", "tpu"], "--device must be cpu"),
    (["--model-path", "no-equals-sign"], "--model-path expects NAME=PATH"),
    (["--shard", "3/2"], "1 <= K <= N"),
    (["--judge-key-env", "VISTAR_TEST_UNSET_VARIABLE", "--judge-url", "http://x/v1", "--judge-model", "m"],
     "that environment variable is not set"),
])
def test_a_bad_option_exits_2_and_leaves_no_run_folder(tmp_path, fake, extra, message):
    png(tmp_path / "imgs" / "m" / "a.png")
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"']), *extra)
    assert res.exit_code == ExitCode.USAGE == 2, res.output
    assert message in res.output
    assert not (tmp_path / "run").exists()  # neither the folder nor its .lock


def test_angle_codes_are_case_insensitive_and_recorded_in_the_ontology_spelling(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"']), "--angles", "tr")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "run" / "run.json").read_text())["angles"] == ["TR"]
    assert set(read_scores(tmp_path / "run").angle) == {"TR"}


def test_end_of_run_summary_names_the_missing_weight_and_its_fetch_command(tmp_path, monkeypatch):
    """GC needs the DPT depth weight, absent on a fresh machine (VISTAR_HOME and the HF cache point at empty
    folders here): its rows are skipped, and the summary says which weight and how to get it, in 80 columns."""
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    png(tmp_path / "imgs" / "m" / "g.png", size=(64, 64))
    png(tmp_path / "imgs" / "m" / "h.png", size=(64, 64))
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", ["g: [GD|GC] a cube", "h: [PH|GC] a ball"]))
    assert res.exit_code == 0, res.output  # skipped rows are not errors: they are retried on the next run
    rows = read_scores(tmp_path / "run")
    assert set(rows.status) == {"skipped"} and rows.error.str.contains("vistar models fetch").all()
    weight = rows.error.iloc[0].split("'")[1]  # the weight the rows name, e.g. dpt-hybrid-midas
    lines = res.output.splitlines()
    start = lines.index("not scored (first reason per angle; all reasons are in the rows' `error` field):")
    assert lines[start + 1] == f"  GC 2 skipped: missing model weight '{weight}'"
    assert lines[start + 2] == f"      fix: vistar models fetch {weight} (or --model-path NAME=PATH)"
    assert all(len(line) <= 80 for line in lines[start:start + 3])
    assert last_line(res) == "complete (rows: 2 skipped)"
