"""`vistar score --suite NAME IMAGES` against the local judge: protocol rows land in scores.parquet with the
expected scores (from the server's documented answer rules) and a benchmark summary is written."""
from __future__ import annotations

import json
import re

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support.phybench_files import write_phybench
from tests.support.protocol_helpers import SHARED, shared
from tests.support.suite_cli import run_suite
from tests.support.vlm_helpers import BLACK, RED, WHITE, solid
from vistar.cli import app
from vistar.engine.store import read_scores
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt, validate_prompt
from vistar.prompts_dsl.parser import serialize_prompt
from vistar.vlm.protocols import PROTOCOLS
from vistar.vlm.testing_server import JudgeServer


@pytest.mark.slow
def test_wise_legacy_and_verified(tmp_path):
    data = shared("WISE")
    scores, _ = run_suite(tmp_path / "a", "wise-legacy", data, {"1": WHITE, "701": BLACK})
    # bright: C=2, R=2, A=1; dark: C=0, R=0, A=1
    assert scores == pytest.approx({("1", "wiscore.legacy"): (1.4 + 0.4 + 0.1) / 2, ("701", "wiscore.legacy"): 0.1 / 2})
    scores, _ = run_suite(tmp_path / "b", "wise-verified", data, {"1": WHITE, "641": BLACK})
    assert scores == {("1", "wiscore.verified"): 1.0, ("641", "wiscore.verified"): 0.0}
    summary = json.loads((tmp_path / "b" / "run" / "summary-wise-verified.json").read_text())
    assert summary["modelA"]["categories"] == {"culture": 1.0, "biology": 0.0} and summary["modelA"]["overall"] is None


@pytest.mark.slow
def test_genexam(tmp_path):
    data = shared("GenExam")
    colourless = [i for i in PROTOCOLS["genexam"].load_items(data)
                  if not any(re.search(r"\b(red|green|blue|gray)\b", q, re.I) for q, _ in i.points)]
    bright, dark = colourless[0].id, colourless[1].id
    scores, _ = run_suite(tmp_path, "genexam", data, {bright: WHITE, dark: BLACK})
    assert scores == pytest.approx({(bright, "genexam.strict"): 1.0, (bright, "genexam.relaxed"): 1.0,
                                    (dark, "genexam.strict"): 0.0, (dark, "genexam.relaxed"): 0.0})
    summary = json.loads((tmp_path / "run" / "summary-genexam.json").read_text())
    assert summary["modelA"]["genexam.relaxed"]["overall"] == pytest.approx(0.5)


@pytest.mark.slow
def test_unieval_several_samples_per_prompt(tmp_path):
    data = shared("UniEval")
    item = PROTOCOLS["unieval"].load_items(data)[1]
    expected = sum((next((k for k, v in qa.options.items() if re.search(r"\bred\b", v, re.I)), "E") == qa.answer)
                   for qa in item.qas) / len(item.qas)
    scores, n = run_suite(tmp_path, "unieval", data, {f"{item.id}_0": RED, f"{item.id}_1": RED})
    assert n == len(item.qas)  # the second sample has identical pixels: answered from the cache
    assert list(scores.values()) == pytest.approx([expected, expected])
    summary = json.loads((tmp_path / "run" / "summary-unieval.json").read_text())
    assert summary["modelA"]["case_score"] == pytest.approx(expected)


def test_phybench_with_criteria_stage(tmp_path):
    data = write_phybench(tmp_path / "PhyBench")
    scores, n = run_suite(tmp_path, "phybench", data, {"Gravity_0": WHITE, "Gravity_1": BLACK})
    assert n == 3  # one grade per image plus stage-1 criteria for the item that ships none
    assert scores == pytest.approx({("Gravity_0", "phybench.phy"): 1.0, ("Gravity_0", "phybench.scene"): 1.0,
                                    ("Gravity_1", "phybench.phy"): 0.0, ("Gravity_1", "phybench.scene"): 0.0})


@pytest.mark.slow
def test_other_judges_replies_end_to_end(tmp_path):
    """Replies in another judge's format score right; a judge that keeps answering out of range gives error rows
    that quote its reply, never a clamped score."""
    folder = tmp_path / "images" / "modelA"
    folder.mkdir(parents=True)
    for name in ("1", "2"):
        Image.fromarray(solid(WHITE)).save(folder / f"{name}.png")

    def run(out, replies):
        with JudgeServer() as server:
            server.replies.extend(replies)
            result = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--suite", "wise-legacy", "--data-dir",
                                              str(shared("WISE")), "--out", str(tmp_path / out), "--judge-url", server.url,
                                              "--judge-model", "other-judge"], env={"VISTAR_HOME": str(tmp_path / out / "home")})
        assert result.exit_code in (0, 3), result.output  # 3: a run that ends with error rows is partial
        return read_scores(tmp_path / out)

    ok = run("a", ["**Consistency**: 2\n**Realism**: 1\n**Aesthetic Quality**: 0"] * 2)
    assert list(ok.status) == ["ok", "ok"] and list(ok.score) == pytest.approx([(1.4 + 0.2) / 2] * 2)
    bad = '{"consistency": 3, "realism": 2, "aesthetic_quality": 2}'
    failed = run("b", [bad] * 6)  # two images, each asked and re-asked twice (max_reasks 2)
    assert list(failed.status) == ["error", "error"] and failed.score.isna().all()
    assert all("'consistency' must be an integer from 0 to 2, got 3" in e and repr(bad) in e for e in failed.error)


def test_suite_needs_data_and_a_known_name(tmp_path):
    runner = CliRunner()
    (tmp_path / "images" / "m").mkdir(parents=True)
    res = runner.invoke(app, ["score", str(tmp_path / "images"), "--suite", "wise-verified", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "--data-dir" in res.output
    res = runner.invoke(app, ["score", str(tmp_path / "images"), "--suite", "nope", "--data-dir", str(tmp_path), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "unknown protocol" in res.output


@pytest.mark.slow
def test_every_public_item_becomes_a_valid_prompt(tmp_path):
    if not SHARED.is_dir():
        pytest.skip("public benchmark data not found at ../shared/data (relative to the repository root)")
    ontology = Ontology.load(None)
    sources = {name: SHARED for name in ("wise-legacy", "wise-verified", "genexam", "unieval")}
    sources["phybench"] = write_phybench(tmp_path / "PhyBench")
    for name, root in sources.items():
        for item in PROTOCOLS[name].load_items(root):
            prompt = item.to_prompt()
            errors = [i for i in validate_prompt(prompt, ontology) if i.severity == "error"]
            assert not errors, (name, item.id, errors)
            back = parse_prompt(serialize_prompt(prompt), id=prompt.id)
            assert (back.core, back.controls) == (prompt.core, {"protocol": name, "item": item.id})
