"""Every report says which judge template family produced a protocol's numbers: vistar's own templates (not
comparable with published tables) or the benchmark's upstream prompts, and says so when one run folder mixes both."""
import json
from html import escape

import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support.protocol_helpers import shared
from tests.support.scores_builder import row, write_run
from tests.support.vlm_helpers import BLACK, WHITE, solid
from vistar.cli import app
from vistar.report import build_report
from vistar.vlm.protocols import PROTOCOLS
from vistar.vlm.testing_server import JudgeServer

OWN = f"vistar-wise-verified-{PROTOCOLS['wise-verified'].version}: not comparable with published tables"


def judged_run(tmp_path, *extra) -> tuple:
    """`vistar score --suite wise-verified` with the local judge on two images, then `vistar report`."""
    folder = tmp_path / "images" / "modelA"
    folder.mkdir(parents=True)
    for name, rgb in {"1": WHITE, "641": BLACK}.items():
        Image.fromarray(solid(rgb)).save(folder / f"{name}.png")
    env = {"VISTAR_HOME": str(tmp_path / "home")}
    with JudgeServer() as server:
        scored = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--suite", "wise-verified", "--data-dir",
                                          str(shared("WISE")), "--out", str(tmp_path / "run"), "--judge-url", server.url,
                                          "--judge-model", "t", *extra], env=env)
    assert scored.exit_code == 0, scored.output
    report = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--resamples", "100"], env=env)
    assert report.exit_code == 0, report.output
    return report.output.splitlines(), tmp_path / "run" / "report"


@pytest.mark.slow
def test_a_run_judged_with_vistars_templates_says_they_are_not_comparable(tmp_path):
    lines, out = judged_run(tmp_path)
    said = f"wiscore.verified (2 rows) judged with {OWN}."
    assert said in lines
    html = (out / "report.html").read_text()
    assert f'<ul class="notes" id="judge-templates"><li>{escape(said)}</li></ul>' in html
    assert f"## Judge templates\n\n- {said}\n" in (out / "report.md").read_text()
    notes = pd.read_csv(out / "tables" / "notes.csv")
    assert notes.loc[notes.kind == "judge_template", "note"].tolist() == [said]
    assert json.loads((out / "report.json").read_text())["judge_templates"] == [said]


@pytest.mark.slow
def test_a_run_judged_with_the_upstream_prompts_names_the_pinned_commit(tmp_path):
    lines, _ = judged_run(tmp_path, "--upstream", str(shared("WISE") / "upstream"))
    assert "wiscore.verified (2 rows) judged with upstream WISE@eb51174." in lines
    assert not any("not comparable" in line for line in lines)


def test_mixed_families_are_named_with_their_counts_and_run_json_adds_the_note(tmp_path):
    upstream, note = "upstream UniEval@1234567", "upstream UniEval@1234567 (vistar sends the question as user text)"
    rows = [row("A", "u1", "CUL", 0.5, metric="uniscore", details={"template": upstream}),
            row("B", "u1", "CUL", 0.7, metric="uniscore", details={"template": upstream}),
            row("A", "u2", "CUL", 0.2, metric="uniscore", details={"template": "vistar-unieval-1: not comparable"}),
            row("A", "t1", "TR", 0.4),
            row("B", "t1", "TR", 0.6)]
    run = write_run(tmp_path / "run", rows)
    (run / "run.json").write_text(json.dumps({"status": "complete", "judge_templates": {"unieval": note,
                                                                                       "genexam": "upstream GenExam@abc"}}))
    data, _ = build_report(run, tmp_path / "r", resamples=100)
    assert data.judge_templates == [
        ("uniscore mixes judge template families, whose numbers are not comparable with each other: "
         f"{note} (2 rows); vistar-unieval-1: not comparable (1 row)."),
        "run.json: --suite genexam judged with upstream GenExam@abc."]


def test_a_run_without_protocol_rows_has_no_template_section(tmp_path):
    run = write_run(tmp_path / "run", [row("A", "t1", "TR", 0.4), row("B", "t1", "TR", 0.6)])
    data, paths = build_report(run, tmp_path / "r", resamples=100)
    assert data.judge_templates == []
    assert "judge-templates" not in paths["html"].read_text() and "Judge templates" not in paths["markdown"].read_text()
