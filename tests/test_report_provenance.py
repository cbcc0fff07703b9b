"""The report says what produced its numbers: the device asked for and used, where each stage ran and each
model's runtime (from run.json), in the HTML, the Markdown, the notes table, report.json and `vistar report`."""
import json
from html import escape

import pandas as pd
from typer.testing import CliRunner

from tests.support.scores_builder import row, write_run
from vistar.cli import app
from vistar.report import build_report

META = {"status": "complete", "device": "cpu", "device_requested": "auto",
        "stage_devices": {"ocr": "cpu", "depth": "cpu"},
        "models": {"rapidocr/PP-OCRv6_det_small": {"provider": "OpenVINO CPU f32",
                                                   "note": "bf16 asked for; this CPU has no native BF16"},
                   "dpt-hybrid-midas": {"path": "/w/dpt", "sha256": "0" * 64}}}
SAID = ["Device: cpu (--device auto); stages: depth on cpu, ocr on cpu.",
        "rapidocr/PP-OCRv6_det_small ran on OpenVINO CPU f32 (bf16 asked for; this CPU has no native BF16)."]


def scored_run(tmp_path, meta):
    run = write_run(tmp_path / "run", [row("A", "t1", "TR", 0.4), row("B", "t1", "TR", 0.7)])
    (run / "run.json").write_text(json.dumps(meta))
    return run


def test_the_report_files_say_where_stages_and_models_ran(tmp_path):
    data, paths = build_report(scored_run(tmp_path, META), tmp_path / "r", resamples=100)
    assert data.provenance == SAID
    html = paths["html"].read_text()
    section = html.split('<ul class="notes" id="provenance">', 1)[1].split("</ul>", 1)[0]
    assert section == "".join(f"<li>{escape(line)}</li>" for line in SAID)
    md = paths["markdown"].read_text()
    assert "## What ran\n\n" + "\n".join(f"- {line}" for line in SAID) + "\n" in md
    notes = pd.read_csv(paths["csv:notes"])
    assert notes.loc[notes.kind == "provenance", "note"].tolist() == SAID
    assert json.loads(paths["json"].read_text())["provenance"] == SAID
    assert "dpt-hybrid-midas" not in html  # a weight that recorded no runtime has nothing to say


def test_vistar_report_prints_what_ran(tmp_path):
    res = CliRunner().invoke(app, ["report", str(scored_run(tmp_path, META)), "--out", str(tmp_path / "r"),
                                   "--resamples", "100"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert all(line in lines for line in SAID)
    assert lines.index(SAID[0]) < len(lines) - 1 and lines[-1].startswith("report: ")


def test_a_run_json_without_these_fields_gives_no_section(tmp_path):
    data, paths = build_report(scored_run(tmp_path, {"status": "complete"}), tmp_path / "r", resamples=100)
    assert data.provenance == []
    assert 'id="provenance"' not in paths["html"].read_text() and "## What ran" not in paths["markdown"].read_text()
