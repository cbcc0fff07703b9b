"""A `vistar score --suite` run reads the benchmark's items once: after the suite's prompt file is written, its
data folder may vanish and the judge stages of every scoring process (`--cpu-workers 2`) and the summary still
have every item. run.json, written by the run itself, names the template family."""
from __future__ import annotations

import json
import shutil

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support.vlm_helpers import BLACK, WHITE, solid
from vistar.cli import app
from vistar.engine.store import read_scores
from vistar.vlm import suite_run
from vistar.vlm.testing_server import JudgeServer

pytestmark = pytest.mark.slow

N_ITEMS = 6


def _phybench(folder):
    folder.mkdir(parents=True)
    records = [{"prompt": f"a ball on slope {n}", "normal": "it rolls down", "law": "Gravity",
                "grading": "Scene score 2 if shown; physics score 3 if it rolls"} for n in range(N_ITEMS)]
    (folder / "force.json").write_text(json.dumps(records))
    return folder


def test_items_are_read_once_for_every_process_and_the_summary(tmp_path, monkeypatch):
    data = _phybench(tmp_path / "PhyBench")
    images = tmp_path / "images" / "m"
    images.mkdir(parents=True)
    for n in range(N_ITEMS):
        Image.fromarray(solid(WHITE if n % 2 else BLACK)).save(images / f"Gravity_{n}.png")
    prepare = suite_run.prepare_suite

    def prepare_then_remove(*args, **kwargs):
        prepared = prepare(*args, **kwargs)
        shutil.move(data, tmp_path / "gone")   # nothing after this point can read the benchmark's files
        data.mkdir()
        return prepared

    monkeypatch.setattr(suite_run, "prepare_suite", prepare_then_remove)
    with JudgeServer() as server:
        result = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--suite", "phybench", "--data-dir", str(data),
                                          "--out", str(tmp_path / "run"), "--judge-url", server.url, "--judge-model", "t",
                                          "--batch-size", "2", "--cpu-workers", "2"],
                                    env={"VISTAR_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, result.output
    assert not list(data.iterdir())
    frame = read_scores(tmp_path / "run")
    assert len(frame) == 2 * N_ITEMS and set(frame.status) == {"ok"}, frame[["prompt_id", "error"]]
    summary = json.loads((tmp_path / "run" / "summary-phybench.json").read_text())
    assert summary["m"]["phybench.phy"]["missing"] == 0   # every item known to the summary
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["status"] == "complete" and run["executor"]["workers"] == 2
    assert run["judge_templates"] == {"phybench": "vistar-phybench-1: not comparable with published tables"}
