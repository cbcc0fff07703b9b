"""`vistar score --suite core` scores images named after shipped suite ids without an export step."""
import json

import pytest
from typer.testing import CliRunner

from vistar.cli import app
from vistar.engine.store import read_scores
from vistar.suites import load_builtin
from vistar.synth.text import render_text

pytestmark = pytest.mark.slow


def test_score_with_a_shipped_suite_name(tmp_path):
    tr = [p for p in load_builtin("core") if p.angle == "TR"][:2]
    for p in tr:
        out = tmp_path / "img" / "m1" / f"{p.id}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        render_text(str(p.controls["text"]), size=512).save(out)
    result = CliRunner().invoke(app, ["score", str(tmp_path / "img"), "--suite", "core", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    rows = read_scores(tmp_path / "run")
    assert sorted(rows.prompt_id) == sorted(p.id for p in tr)
    assert (rows.status == "ok").all() and (rows.score > 0.8).all()  # the exact text was rendered
    assert (tmp_path / "run" / "suite-core.vistar").exists()  # the run keeps the prompts it scored
    assert not (tmp_path / "run" / "summary-core.json").exists()  # benchmark summaries are for protocols
    problems = [json.loads(line) for line in (tmp_path / "run" / "problems.jsonl").read_text().splitlines()]
    assert sum(p["kind"] == "prompt_without_image" for p in problems) == len(load_builtin("core")) - 2
