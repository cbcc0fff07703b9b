"""`Scorer(run_dir=...)` appends to a run folder under the writer lock of `vistar score`: `vistar report` and
`vistar calibrate` read it, a held lock refuses the call, rows still right for an image are reused, and a folder
`vistar score` wrote keeps its run.json."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support import engine_plugins
from vistar import Scorer
from vistar.cli import app
from vistar.engine.runner import RunLocked, writer_lock
from vistar.engine.store import read_scores

LINE = 's{k}: [GD|TR] A sign that says "OPEN" {{text="OPEN"}}'


@pytest.fixture(autouse=True)
def fake_tr(monkeypatch):
    engine_plugins.install(monkeypatch)


def _rgb(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (24, 32, 3), dtype=np.uint8)


@pytest.mark.slow
def test_rows_appended_are_read_by_report_and_calibrate(tmp_path):
    run = tmp_path / "run"
    scorer = Scorer(run_dir=run)
    first = scorer.score([_rgb(k) for k in range(3)], [LINE.format(k=k) for k in range(3)], model="a")
    scorer.score([_rgb(10 + k) for k in range(3)], [LINE.format(k=k) for k in range(3)], model="b")
    stored = read_scores(run)
    assert len(stored) == 12 and set(stored["model"]) == {"a", "b"}
    assert sorted(stored.loc[stored.model == "a", "key"]) == sorted(r.key for r in first)
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["command"] == "vistar.Scorer" and len(meta["history"]) == 2
    report = CliRunner().invoke(app, ["report", str(run), "--resamples", "100"])
    assert report.exit_code == 0, report.output
    assert "2 model(s); angles scored: TR" in report.output and "This run has no run.json" not in report.output
    pairs = tmp_path / "pairs.csv"   # in-memory images are named by their `image` column (or their key's sha256)
    a = {r.prompt_id: r.image for r in first if r.metric == "TR"}
    b = {r["prompt_id"]: r["image"] for r in stored[(stored.model == "b") & (stored.metric == "TR")].to_dict("records")}
    pairs.write_text("image_a,image_b,preferred\n" + "".join(f"{a[p]},{b[p]},a\n" for p in sorted(a)))
    calibrated = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--resamples", "100"])
    assert calibrated.exit_code == 0, calibrated.output
    metrics = json.loads((run / "calibration" / "calibration.json").read_text())
    assert metrics["judgments"] == 3


def test_a_held_writer_lock_refuses_the_call(tmp_path):
    run = tmp_path / "run"
    scorer = Scorer(run_dir=run)
    with writer_lock(run):   # what a `vistar score` into the same folder holds
        with pytest.raises(RunLocked, match="another `vistar score`"):
            scorer.score(_rgb(0), LINE.format(k=0))
    assert len(scorer.score(_rgb(0), LINE.format(k=0))) == 2


def test_memory_samples_never_replace_earlier_rows(tmp_path):
    run = tmp_path / "run"
    Scorer(run_dir=run).score(_rgb(0), LINE.format(k=0))
    again = Scorer(run_dir=run).score(_rgb(1), LINE.format(k=0))   # a new Scorer: numbering continues from the folder
    assert {r.sample for r in again} == {1} and len(read_scores(run)) == 4


def test_a_file_already_scored_is_reused_and_a_cli_run_json_is_kept(tmp_path):
    folder = tmp_path / "images" / "m"
    folder.mkdir(parents=True)
    for k in range(2):
        Image.fromarray(_rgb(k)).save(folder / f"s{k}.png")
    (tmp_path / "p.vistar").write_text("".join(LINE.format(k=k) + "\n" for k in range(2)))
    run = tmp_path / "run"
    cli = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--prompts", str(tmp_path / "p.vistar"), "--out", str(run),
                                   "--cpu-workers", "1"])
    assert cli.exit_code == 0, cli.output
    before = read_scores(run)
    calls = len(engine_plugins.CALLS)
    results = Scorer(run_dir=run).score([folder / "s0.png", folder / "s1.png"], [LINE.format(k=k) for k in range(2)])
    assert len(engine_plugins.CALLS) == calls   # nothing scored again: the rows are the folder's
    assert sorted((r.key, r.score) for r in results) == sorted(zip(before["key"], before["score"]))
    assert read_scores(run).sort_values("key")["shard"].tolist() == before.sort_values("key")["shard"].tolist()
    meta = json.loads((run / "run.json").read_text())
    assert meta["command"] != "vistar.Scorer" and meta["status"] == "complete"
    assert meta["history"][-1]["command"] == "vistar.Scorer.score" and meta["history"][-1]["rows_reused"] == 4


def test_many_calls_keep_the_run_folder_to_a_few_files(tmp_path, monkeypatch):
    """Each call appends a shard and reads every shard back (to plan, to reuse): without compacting, call N opens N
    files. The folder is compacted once it holds more than COMPACT_AFTER small shards (3 here, 64 by default)."""
    from vistar.engine.store import ResultStore
    from vistar.scoring import scorer as scorer_module

    monkeypatch.setattr(scorer_module, "COMPACT_AFTER", 3, raising=False)
    run = tmp_path / "run"
    scorer = Scorer(run_dir=run)
    shards = []
    for k in range(10):
        scorer.score(_rgb(k), LINE.format(k=k), model="a")
        shards.append(len(list(ResultStore(run, writable=False).dir.glob("part-*.parquet"))))
    assert max(shards) <= 3 and shards[:3] == [1, 2, 3]   # grows call by call, then is merged back
    stored = read_scores(run)
    assert len(stored) == 20 and sorted(set(stored.prompt_id)) == sorted(f"s{k}" for k in range(10))
    assert len(set(stored.key)) == 20 and (stored.status == "ok").all()   # every call's rows survive the merges


def test_reused_rows_equal_fresh_rows_field_for_field(tmp_path):
    """Rows reused from the folder are read back as the store's values (None for an empty field), not pandas' NaN:
    a reused result is the fresh one, and `to_pandas()` builds its frame from them."""
    folder = tmp_path / "images" / "m"
    folder.mkdir(parents=True)
    Image.fromarray(_rgb(0)).save(folder / "s0.png")
    scorer = Scorer(run_dir=tmp_path / "run")
    fresh = scorer.score(folder / "s0.png", LINE.format(k=0))
    calls = len(engine_plugins.CALLS)
    again = scorer.score(folder / "s0.png", LINE.format(k=0))
    assert len(engine_plugins.CALLS) == calls   # the second call reused every row
    assert list(again) == list(fresh) and all(r.error is None for r in again)
    assert again.to_pandas().drop(columns="shard").equals(fresh.to_pandas().drop(columns="shard"))


def test_a_run_folder_keeps_the_max_pixels_it_was_scored_with(tmp_path):
    """max_pixels decides the scale a large JPEG is decoded at but is not in the key: appending with another value
    would mix two decodings in one folder, so the Scorer refuses it as a `vistar score` resume does."""
    folder = tmp_path / "images" / "m"
    folder.mkdir(parents=True)
    Image.fromarray(_rgb(0)).save(folder / "s0.png")
    (tmp_path / "p.vistar").write_text(LINE.format(k=0) + "\n")
    run = tmp_path / "run"
    cli = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--prompts", str(tmp_path / "p.vistar"),
                                   "--out", str(run), "--max-pixels", "1000000", "--cpu-workers", "1"])
    assert cli.exit_code == 0, cli.output
    refused = "was scored with max_pixels 1000000; this run has max_pixels 64000000"
    with pytest.raises(ValueError, match=refused):
        Scorer(run_dir=run).score(folder / "s0.png", LINE.format(k=0))
    results = Scorer(run_dir=run, max_pixels=1_000_000).score(folder / "s0.png", LINE.format(k=0))
    assert {r.status for r in results} == {"ok"} and len(read_scores(run)) == 2   # the folder's rows, reused
    mine = tmp_path / "mine"   # a folder the Scorer started records its value, which a `vistar score` resume keeps
    Scorer(run_dir=mine, max_pixels=2_000_000).score(_rgb(1), LINE.format(k=1))
    assert json.loads((mine / "run.json").read_text())["max_pixels"] == 2_000_000
    resumed = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--prompts", str(tmp_path / "p.vistar"),
                                       "--out", str(mine), "--cpu-workers", "1"])
    assert resumed.exit_code == 2 and "was scored with --max-pixels 2000000" in resumed.output


def test_a_scorer_refuses_a_folder_another_max_pixels_took_over_between_its_calls(tmp_path):
    run = tmp_path / "run"
    scorer = Scorer(run_dir=run)   # nothing there yet
    Scorer(run_dir=run, max_pixels=5_000_000).score(_rgb(0), LINE.format(k=0))
    with pytest.raises(ValueError, match="max_pixels 5000000; this run has max_pixels 64000000"):
        scorer.score(_rgb(1), LINE.format(k=1))
    assert len(read_scores(run)) == 2   # nothing written by the refused call


def test_a_scorer_folder_from_before_max_pixels_was_recorded_counts_as_the_old_default(tmp_path):
    """The Scorer had no max_pixels then: its rows were decoded under the default, so another value is refused (by
    the Scorer and by a `vistar score` resume alike) and the default is accepted and recorded."""
    run = tmp_path / "run"
    Scorer(run_dir=run).score(_rgb(0), LINE.format(k=0))
    meta = json.loads((run / "run.json").read_text())
    del meta["max_pixels"]   # as such a Scorer wrote it
    (run / "run.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="max_pixels 64000000; this run has max_pixels 50"):
        Scorer(run_dir=run, max_pixels=50)
    folder = tmp_path / "images" / "m"
    folder.mkdir(parents=True)
    Image.fromarray(_rgb(1)).save(folder / "s1.png")
    (tmp_path / "p.vistar").write_text(LINE.format(k=1) + "\n")
    cli = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--prompts", str(tmp_path / "p.vistar"),
                                   "--out", str(run), "--max-pixels", "50", "--cpu-workers", "1"])
    assert cli.exit_code == 2 and "was scored with --max-pixels 64000000" in cli.output
    Scorer(run_dir=run).score(_rgb(1), LINE.format(k=1))
    assert json.loads((run / "run.json").read_text())["max_pixels"] == 64_000_000
