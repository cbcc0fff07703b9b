"""A resume on a machine that cannot run a metric (its module fails to import) or lacks a catalogued weight keeps
the `ok` rows scored with it: they are never replaced by `skipped` rows or by a score from less evidence."""
import json

from tests.support import engine_plugins
from tests.support.run_inputs import png, prompts
from vistar.engine import plan
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores


def _rows(run):
    return {(r["image"], r["metric"]): (r["status"], r["score"], r["key"]) for r in read_scores(run).to_dict("records")}


def _kept(run):
    return [json.loads(line) for line in (run / "problems.jsonl").read_text().splitlines()
            if json.loads(line)["kind"] == "ok_rows_kept"]


def test_ok_rows_of_a_metric_that_cannot_import_are_kept_and_said(tmp_path, monkeypatch):
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    png(imgs / "m" / "a.png", (10, 20, 30))
    png(imgs / "m" / "b.png", (200, 100, 0))
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B"'])
    engine_plugins.install(monkeypatch)
    run_score(ScoreConfig(imgs, p, run))
    before = _rows(run)
    engine_plugins.install(monkeypatch, {**engine_plugins.METRICS, "TR": "tests.no_such_module:METRIC"})
    png(imgs / "m" / "b.png", (0, 0, 0))     # b's bytes changed: its old TR score no longer describes it
    resumed = run_score(ScoreConfig(imgs, p, run))
    after = _rows(run)
    assert after[("m/a.png", "TR")] == before[("m/a.png", "TR")]
    assert after[("m/b.png", "TR")][0] == "skipped"
    assert resumed.kept == 1
    (line,) = _kept(run)
    assert line["item"] == "TR" and line["message"].startswith("1 ok row(s)") and "no_such_module" in line["message"]
    assert json.loads((run / "run.json").read_text())["counts"]["rows_kept"] == 1
    engine_plugins.install(monkeypatch)      # the metric is back: a's row still has the key it was scored with
    back = run_score(ScoreConfig(imgs, p, run))
    assert _rows(run)[("m/a.png", "TR")] == before[("m/a.png", "TR")] and back.kept == 0
    assert _rows(run)[("m/b.png", "TR")][0] == "ok"


def _weighted_run(tmp_path, monkeypatch, absent: set[str]):
    """(images, prompts, run folder) of one TR prompt whose stage needs the catalogued "fake-weight", absent on
    this machine while it is in ABSENT (the caller's set, changed between runs)."""
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    png(imgs / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    monkeypatch.setitem(engine_plugins.FEATURES, "fake_stats", "tests.support.engine_plugins:STAGE_WEIGHTED")
    engine_plugins.install(monkeypatch)
    monkeypatch.setattr(plan, "_absent", lambda model, paths: model in absent)
    return imgs, p, run


def test_ok_rows_scored_with_a_weight_now_absent_are_kept(tmp_path, monkeypatch):
    absent: set[str] = set()
    imgs, p, run = _weighted_run(tmp_path, monkeypatch, absent)
    run_score(ScoreConfig(imgs, p, run))
    before = _rows(run)
    absent.add("fake-weight")
    engine_plugins.CALLS.clear()
    resumed = run_score(ScoreConfig(imgs, p, run))
    assert _rows(run) == before and engine_plugins.CALLS == [] and resumed.kept == 2
    assert {line["item"] for line in _kept(run)} == {"TR", "TR.odd"}
    assert "fake-weight absent" in _kept(run)[0]["message"]
    absent.clear()                           # the weight is back: the rows are reused as they are, nothing kept
    again = run_score(ScoreConfig(imgs, p, run))
    assert _rows(run) == before and (again.reused, again.kept) == (2, 0)


def test_a_row_scored_without_the_weight_is_scored_again_once_it_is_there(tmp_path, monkeypatch):
    absent = {"fake-weight"}
    imgs, p, run = _weighted_run(tmp_path, monkeypatch, absent)
    run_score(ScoreConfig(imgs, p, run))
    absent.clear()
    again = run_score(ScoreConfig(imgs, p, run))
    assert (again.reused, again.scored, again.kept) == (0, 2, 0)
