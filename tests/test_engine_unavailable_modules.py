"""A metric or judge protocol whose module does not import on this machine costs only its own rows: they are
`skipped`, naming the module and how to install it, and every other metric of the run is scored."""
import json
import sys

import pytest
from typer.testing import CliRunner

from tests.support import engine_plugins
from tests.support.run_inputs import png, prompts
from vistar.cli import app
from vistar.engine import registry
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import ResultStore, read_scores

LINES = ['a: [GD|TR] "A"', 'b: [IL|CUL] a red square {protocol="toy-colours", item="b"}',
         'c: [IL|CUL] a chart {protocol="genexam", item="c"}']


def _score(tmp_path):
    for pid in "abc":
        png(tmp_path / "imgs" / "m" / f"{pid}.png")
    p = prompts(tmp_path / "p.vistar", LINES)
    res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "run")])
    rows = read_scores(tmp_path / "run").set_index(["prompt_id", "metric"])
    found = [json.loads(line) for line in (tmp_path / "run" / "problems.jsonl").read_text().splitlines()]
    return res, rows, found


@pytest.mark.parametrize("missing", ["vistar_absent_plugin", "httpx"])
def test_a_protocol_that_does_not_import_skips_only_its_own_rows(tmp_path, monkeypatch, missing):
    engine_plugins.install(monkeypatch)
    monkeypatch.setitem(sys.modules, missing, None)   # as if not installed: importing it raises ModuleNotFoundError
    (tmp_path / "lacking_protocol.py").write_text(f"import {missing}\nfrom tests.support.toy_protocol import PROTOCOL\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "PROTOCOLS", {**registry.PROTOCOLS, "toy-colours": "lacking_protocol:PROTOCOL"})
    res, rows, found = _score(tmp_path)
    assert res.exit_code == 0, res.output   # skipped rows do not make a run partial (docs/cli.md)
    assert (rows.loc["a", "status"] == "ok").all()   # the other metrics are scored
    assert rows.loc["c", "error"].str.startswith("no judge configured").all()  # another protocol runs as ever
    toy = rows.loc[("b", "toy-colours")]
    assert toy["status"] == "skipped"
    assert toy["error"].startswith("metric toy-colours unavailable: module lacking_protocol cannot be imported: "
                                   "ModuleNotFoundError: ")
    hint = "pip install 'vistar[vlm]'" if missing == "httpx" else f"install the package that provides '{missing}'"
    assert hint in toy["error"]
    assert {"kind": "metric_unavailable", "item": "toy-colours", "message": toy["error"]} in found
    fix = "fix: pip install 'vistar[vlm]'" if missing == "httpx" else "fix: fix the cause and rerun"
    assert fix in res.output   # the end-of-run summary: its first CUL reason is the toy's (prompt b before c)


def test_a_metric_that_does_not_import_names_its_module_and_the_install(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch, {**engine_plugins.METRICS, "TR.extra": "tests.no_such_module:METRIC"})
    res, rows, found = _score(tmp_path)
    assert res.exit_code == 0, res.output
    assert rows.loc[("a", "TR"), "status"] == "ok"
    extra = rows.loc[("a", "TR.extra")]
    assert extra["status"] == "skipped"
    assert extra["error"] == ("metric TR.extra unavailable: module tests.no_such_module cannot be imported: "
                              "ModuleNotFoundError: No module named 'tests.no_such_module': install the package that "
                              "provides 'tests.no_such_module' into this Python environment")
    assert {"kind": "metric_unavailable", "item": "TR.extra", "message": extra["error"]} in found



def test_a_resume_where_a_protocol_no_longer_imports_keeps_its_ok_rows(tmp_path, monkeypatch):
    """Its metrics cannot be named without its module, yet the ok rows it scored of unchanged images are its own:
    a resume must not drop them (docs/engine.md, "Keying and resume")."""
    engine_plugins.install(monkeypatch)
    monkeypatch.setattr(registry, "PROTOCOLS", {**registry.PROTOCOLS, "toy-colours": "tests.support.toy_protocol:PROTOCOL"})
    png(tmp_path / "imgs" / "m" / "b.png")
    p = prompts(tmp_path / "p.vistar", [LINES[1]])
    run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "run"))
    store = ResultStore(tmp_path / "run")
    (judged,) = read_scores(tmp_path / "run").to_dict("records")   # skipped (no judge): made the judged row
    assert judged["metric"] == "toy.match"
    store.forget([judged["key"]])
    fields = ("image", "image_sha256", "model", "prompt_id", "sample", "role", "angle", "metric", "metric_version", "key")
    store.write([{**{f: judged[f] for f in fields}, "set": None, "status": "ok", "score": 0.75, "error": None,
                  "details": {"colour": "red"}}])
    monkeypatch.setitem(sys.modules, "tests.support.toy_protocol", None)   # this machine cannot import it now
    monkeypatch.setattr(registry, "_CHECKED", {})   # as a new process routes: the protocol's metrics are unknown
    summary = run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "run"))
    rows = read_scores(tmp_path / "run").set_index("metric")
    assert rows.loc["toy.match", "status"] == "ok" and rows.loc["toy.match", "score"] == 0.75
    assert rows.loc["toy-colours", "status"] == "skipped" and summary.kept == 1


def test_a_prompt_edited_to_a_protocol_that_does_not_import_drops_the_rows_of_its_earlier_text(tmp_path, monkeypatch):
    """Only the lost protocol's own rows are kept: the TR rows of the prompt's earlier text are no one's now."""
    engine_plugins.install(monkeypatch)
    png(tmp_path / "imgs" / "m" / "a.png")
    run_score(ScoreConfig(tmp_path / "imgs", prompts(tmp_path / "p.vistar", [LINES[0]]), tmp_path / "run"))
    assert "TR" in set(read_scores(tmp_path / "run")["metric"])
    monkeypatch.setitem(sys.modules, "vistar_absent_plugin", None)
    (tmp_path / "lacking_protocol.py").write_text("import vistar_absent_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "PROTOCOLS", {**registry.PROTOCOLS, "toy-colours": "lacking_protocol:PROTOCOL"})
    edited = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A" {protocol="toy-colours", item="a"}'])
    summary = run_score(ScoreConfig(tmp_path / "imgs", edited, tmp_path / "run"))
    rows = read_scores(tmp_path / "run")
    assert rows[["metric", "status"]].values.tolist() == [["toy-colours", "skipped"]] and summary.kept == 0
