"""A weight swapped under the same name between two invocations into one run folder: the row key does not hold
the weight's sha256 (run.json records it), so a resume would reuse the old weight's rows and add the new one's.
It is refused when the weight is loaded, before any row scored with it is written, naming both sha256."""
import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from tests.support import engine_plugins
from tests.support.run_inputs import png, prompts
from vistar import Scorer
from vistar.cli import app
from vistar.engine import registry
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

OLD, NEW = "a" * 64, "b" * 64
LINE = 'p{k}: [GD|TR] "A"'


@pytest.fixture
def loading(monkeypatch):
    """The fake stage records loading "fake-weight" with the sha256 WEIGHT_SHA says (a test swaps it)."""
    monkeypatch.setitem(engine_plugins.FEATURES, "fake_stats", "tests.support.engine_plugins:STAGE_LOADING")
    engine_plugins.install(monkeypatch)
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", OLD)


def _inputs(tmp_path, n):
    for k in range(n):
        png(tmp_path / "imgs" / "m" / f"p{k}.png", (10 * k, 20, 30))
    return tmp_path / "imgs", prompts(tmp_path / "p.vistar", [LINE.format(k=k) for k in range(n)])


def test_a_resume_that_loads_a_swapped_weight_is_refused_and_writes_nothing(tmp_path, loading, monkeypatch):
    imgs, p = _inputs(tmp_path, 1)
    run = tmp_path / "run"
    run_score(ScoreConfig(imgs, p, run))
    before = read_scores(run)
    imgs, p = _inputs(tmp_path, 2)   # one more image: the resume scores it, loading the weight
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    res = CliRunner().invoke(app, ["score", str(imgs), "--prompts", str(p), "--out", str(run), "--cpu-workers", "1"])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert re.search(f"weight 'fake-weight' .*sha256 {OLD}.*sha256 {NEW}", said), said
    assert "another --out" in said
    assert read_scores(run).equals(before)   # no row of the new weight beside the old one's
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "failed" and meta["models"]["fake-weight"]["sha256"] == OLD   # kept for the next resume
    again = CliRunner().invoke(app, ["score", str(imgs), "--prompts", str(p), "--out", str(run), "--cpu-workers", "1"])
    assert again.exit_code == 2 and read_scores(run).equals(before)
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", OLD)   # the weight put back: the resume goes on
    assert run_score(ScoreConfig(imgs, p, run)).scored == 2


def test_a_resume_with_the_same_weight_or_one_that_loads_nothing_goes_on(tmp_path, loading, monkeypatch):
    imgs, p = _inputs(tmp_path, 1)
    run = tmp_path / "run"
    run_score(ScoreConfig(imgs, p, run))
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    assert run_score(ScoreConfig(imgs, p, run)).reused == 2   # every row reused: the weight is never loaded


def test_a_scorer_appending_with_a_swapped_weight_is_refused(tmp_path, loading, monkeypatch):
    imgs, p = _inputs(tmp_path, 1)
    run = tmp_path / "run"
    run_score(ScoreConfig(imgs, p, run))
    before = read_scores(run)
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    with pytest.raises(ValueError, match=f"sha256 {OLD}.*sha256 {NEW}.*another run_dir"):
        Scorer(run_dir=run).score(imgs / "m" / "p0.png", 'p9: [GD|TR] "B"')
    assert read_scores(run).equals(before)


class _Killed(BaseException):
    """Stands for SIGKILL: nothing of the run's own handling runs, run.json stays as it was last written."""


def _killed_at_p1(score) -> None:
    """Run SCORE (a call scoring p0, p1, ... one per batch) as a process killed (`_Killed`) when it writes the batch
    that holds prompt p1's rows: p0's rows and whatever run.json said by then are all that is left."""
    from vistar.engine.store import ResultStore

    write = ResultStore.write

    def killed_at_p1(self, rows):
        if any(r["prompt_id"] == "p1" for r in rows):
            raise _Killed()
        return write(self, rows)

    with pytest.MonkeyPatch.context() as killing, pytest.raises(_Killed):
        killing.setattr(ResultStore, "write", killed_at_p1)
        score()


def test_an_invocation_killed_after_its_first_rows_has_already_recorded_their_weight(tmp_path, loading, monkeypatch):
    imgs, p = _inputs(tmp_path, 3)
    run = tmp_path / "run"
    _killed_at_p1(lambda: run_score(ScoreConfig(imgs, p, run, batch_size=1)))
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "running" and meta["models"]["fake-weight"]["sha256"] == OLD
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    with pytest.raises(ValueError, match=f"sha256 {OLD}.*sha256 {NEW}"):
        run_score(ScoreConfig(imgs, p, run, batch_size=1))
    assert set(read_scores(run)["prompt_id"]) == {"p0"}


def test_weights_a_scorer_loads_into_a_cli_folder_are_recorded_for_the_next_resume(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch)   # the CLI's run loads no weight
    imgs, p = _inputs(tmp_path, 1)
    run = tmp_path / "run"
    run_score(ScoreConfig(imgs, p, run))
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", OLD)
    monkeypatch.setitem(registry.FEATURES, "fake_stats", "tests.support.engine_plugins:STAGE_LOADING")
    Scorer(run_dir=run).score(imgs / "m" / "p0.png", 'p9: [GD|TR] "B"')
    assert json.loads((run / "run.json").read_text())["models"]["fake-weight"]["sha256"] == OLD
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    imgs, p = _inputs(tmp_path, 2)
    with pytest.raises(ValueError, match=f"sha256 {OLD}.*sha256 {NEW}"):
        run_score(ScoreConfig(imgs, p, run))


def test_a_weight_another_scorer_loaded_is_neither_recorded_nor_checked(tmp_path, loading, monkeypatch):
    """The process-wide record of loaded weights holds every Scorer's: a Scorer whose rows are all reused loaded
    nothing, so the folder keeps the weight its rows were scored with, and the CLI resumes it with that weight."""
    imgs, p = _inputs(tmp_path, 2)
    run = tmp_path / "run"
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    run_score(ScoreConfig(imgs, prompts(tmp_path / "one.vistar", [LINE.format(k=0)]), run))
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", OLD)
    Scorer().score(imgs / "m" / "p0.png", 'q: [GD|TR] "Z"')   # no run folder: loads OLD in this process
    Scorer(run_dir=run).score(imgs / "m" / "p0.png", LINE.format(k=0))   # every row reused: loads nothing
    assert json.loads((run / "run.json").read_text())["models"]["fake-weight"]["sha256"] == NEW
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    assert run_score(ScoreConfig(imgs, p, run)).reused == 2   # p0's two rows; p1 scored with the folder's weight
    assert set(read_scores(run)["prompt_id"]) == {"p0", "p1"}


def test_a_scorer_checks_the_weight_its_earlier_call_loaded(tmp_path, loading, monkeypatch):
    """Its models stay loaded: a later call scores with the weight its first call loaded, without loading it, so
    a folder rescored meanwhile with another weight is refused as if the call had loaded it."""
    monkeypatch.setitem(engine_plugins.FEATURES, "fake_stats", "tests.support.engine_plugins:STAGE_HELD")
    engine_plugins.install(monkeypatch)
    imgs, p = _inputs(tmp_path, 2)
    run = tmp_path / "run"
    scorer = Scorer(run_dir=run)
    scorer.score(imgs / "m" / "p0.png", LINE.format(k=0))   # loads OLD
    shutil.rmtree(run)
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    run_score(ScoreConfig(imgs, p, run))
    with pytest.raises(ValueError, match=f"sha256 {NEW}.*sha256 {OLD}"):
        scorer.score(imgs / "m" / "p0.png", 'p9: [GD|TR] "B"')


def test_a_scorer_call_killed_after_its_first_rows_has_already_recorded_their_weight(tmp_path, loading, monkeypatch):
    # as the CLI: the weight is named in run.json before a row scored with it lands, so a resume with another
    # weight is refused although the call that wrote the rows never finished
    imgs, _ = _inputs(tmp_path, 3)
    run = tmp_path / "run"
    _killed_at_p1(lambda: Scorer(run_dir=run, batch_size=1).score([imgs / "m" / f"p{k}.png" for k in range(3)],
                                                                  [LINE.format(k=k) for k in range(3)]))
    assert set(read_scores(run)["prompt_id"]) == {"p0"}
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "running" and meta["models"]["fake-weight"]["sha256"] == OLD
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", NEW)
    with pytest.raises(ValueError, match=f"sha256 {OLD}.*sha256 {NEW}"):
        Scorer(run_dir=run, batch_size=1).score(imgs / "m" / "p1.png", LINE.format(k=1))
    assert set(read_scores(run)["prompt_id"]) == {"p0"}
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", OLD)   # the weight put back: the call finishes
    Scorer(run_dir=run, batch_size=1).score([imgs / "m" / f"p{k}.png" for k in range(3)], [LINE.format(k=k) for k in range(3)])
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and set(read_scores(run)["prompt_id"]) == {"p0", "p1", "p2"}
