"""Sharded scoring and merging: N shards scored apart and merged give exactly the rows and problems of one
unsharded run; every unsafe merge is refused before anything is written."""
import json
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests import engine_plugins
from vistar.cli import app
from vistar.engine.merge import MergeError, merge_runs
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.shards import parse_shard, shard_of
from vistar.engine.store import read_scores

COLUMNS = ["image", "model", "prompt_id", "sample", "metric", "score", "status", "error", "details", "key"]


@pytest.fixture
def fake(monkeypatch):
    engine_plugins.install(monkeypatch)


@pytest.fixture
def workload(tmp_path):
    """12 prompts × 2 models, one prompt with no image, one image with no prompt, one invalid prompt line."""
    images = tmp_path / "imgs"
    for model in ("m1", "m2"):
        for i in range(12):
            path = images / model / f"p{i}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (8, 8), (i * 20, 7 * (model == "m2"), 3)).save(path)
    Image.new("RGB", (8, 8)).save(images / "m1" / "ghost.png")
    lines = [f'p{i}: [GD|TR] "text {i}"' for i in range(12)] + ['lonely: [GD|TR] "no image"', "broken: [GD|TR"]
    prompts = tmp_path / "p.vistar"
    prompts.write_text("\n".join(lines) + "\n")
    return images, prompts


def rows(run: Path):
    df = read_scores(run)[COLUMNS]
    return sorted(map(tuple, df.astype(str).values.tolist()))


def problems(run: Path) -> Counter:
    return Counter((p["kind"], p["item"]) for p in map(json.loads, (run / "problems.jsonl").read_text().splitlines()))


def score_shards(tmp_path, images, prompts, count) -> list[Path]:
    runs = []
    for k in range(1, count + 1):
        run = tmp_path / f"shard{k}"
        run_score(ScoreConfig(images, prompts, run, shard=parse_shard(f"{k}/{count}")))
        runs.append(run)
    return runs


@pytest.mark.parametrize("text, index, count", [("1/1", 1, 1), ("3/8", 3, 8), (" 2 / 4 ", 2, 4)])
def test_parse_shard(text, index, count):
    shard = parse_shard(text)
    assert (shard.index, shard.count) == (index, count)


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "2", "a/b", "", "1/2/3"])
def test_parse_shard_refuses(text):
    with pytest.raises(ValueError, match="--shard"):
        parse_shard(text)


def test_assignment_is_balanced_and_ignores_what_else_is_in_the_folder():
    paths = [f"model{m}/prompt{i}.png" for m in range(4) for i in range(1000)]
    sizes = Counter(shard_of(p, 8) for p in paths)
    assert set(sizes) == set(range(1, 9)) and all(400 <= n <= 600 for n in sizes.values()), sizes
    assert [shard_of(p, 8) for p in paths[:10]] == [shard_of(p, 8) for p in paths[:10]]  # a pure function of the path


def test_shards_merged_equal_one_unsharded_run(tmp_path, fake, workload):
    images, prompts = workload
    run_score(ScoreConfig(images, prompts, tmp_path / "whole"))
    shards = score_shards(tmp_path, images, prompts, 3)
    sizes = [len(read_scores(run)) for run in shards]
    assert all(sizes) and sum(sizes) == len(read_scores(tmp_path / "whole"))
    summary = merge_runs(shards, tmp_path / "merged")
    assert rows(tmp_path / "merged") == rows(tmp_path / "whole")
    assert problems(tmp_path / "merged") == problems(tmp_path / "whole")  # each problem once
    assert ("prompt_without_image", "lonely") in problems(tmp_path / "merged")
    assert all(problems(run) == problems(tmp_path / "whole") for run in shards)  # each shard's log stands alone
    assert sum(summary.rows_by_status.values()) == len(read_scores(tmp_path / "whole"))
    meta = json.loads((tmp_path / "merged" / "run.json").read_text())
    assert meta["status"] == "complete" and [m["shard"]["index"] for m in meta["merged_from"]] == [1, 2, 3]
    assert meta["ontology_hash"] == json.loads((tmp_path / "whole" / "run.json").read_text())["ontology_hash"]


def test_missing_shard_refused_unless_partial(tmp_path, fake, workload):
    images, prompts = workload
    shards = score_shards(tmp_path, images, prompts, 3)
    with pytest.raises(MergeError, match="shard\\(s\\) 2/3 missing"):
        merge_runs([shards[0], shards[2]], tmp_path / "merged")
    assert not (tmp_path / "merged").exists()
    summary = merge_runs([shards[0], shards[2]], tmp_path / "merged", partial=True)
    assert summary.missing_shards == [2]
    assert json.loads((tmp_path / "merged" / "run.json").read_text())["status"] == "partial"


def test_unsafe_merges_are_refused_before_writing(tmp_path, fake, workload):
    images, prompts = workload
    shards = score_shards(tmp_path, images, prompts, 2)
    run_score(ScoreConfig(images, prompts, tmp_path / "whole"))
    cases = {
        "given twice": [shards[0], shards[0], shards[1]],
        "unsharded": [tmp_path / "whole", shards[0]],
    }
    for message, runs in cases.items():
        with pytest.raises(MergeError, match=message):
            merge_runs(runs, tmp_path / "out")
        assert not (tmp_path / "out").exists()
    other = tmp_path / "other.yaml"
    other.write_text("metrics:\n  TR:\n    params:\n      min_confidence: 0.9\n")
    run_score(ScoreConfig(images, prompts, tmp_path / "other", ontology=other))
    with pytest.raises(MergeError, match="different ontologies"):
        merge_runs([tmp_path / "whole", tmp_path / "other"], tmp_path / "out")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(MergeError, match="not empty"):
        merge_runs(shards, tmp_path / "full")


def test_overlapping_runs_are_refused(tmp_path, fake, workload):
    images, prompts = workload
    run_score(ScoreConfig(images, prompts, tmp_path / "a"))
    run_score(ScoreConfig(images, prompts, tmp_path / "b", angles=["TR"]))
    with pytest.raises(MergeError, match="the runs overlap"):
        merge_runs([tmp_path / "a", tmp_path / "b"], tmp_path / "out")


def test_a_run_folder_keeps_its_shard(tmp_path, fake, workload):
    images, prompts = workload
    run_score(ScoreConfig(images, prompts, tmp_path / "run", shard=parse_shard("1/2")))
    run_score(ScoreConfig(images, prompts, tmp_path / "run", shard=parse_shard("1/2")))  # resuming is fine
    for other in (parse_shard("2/2"), None):
        with pytest.raises(ValueError, match="was scored with --shard 1/2"):
            run_score(ScoreConfig(images, prompts, tmp_path / "run", shard=other))


def test_score_and_merge_cli(tmp_path, fake, workload):
    images, prompts = workload
    shards = [tmp_path / "s1", tmp_path / "s2"]
    for k, run in enumerate(shards, 1):
        result = CliRunner().invoke(app, ["score", str(images), "--prompts", str(prompts), "--out", str(run), "--shard", f"{k}/2"])
        assert result.exit_code == 0, result.output
    assert json.loads((shards[1] / "run.json").read_text())["shard"] == {"index": 2, "count": 2}
    result = CliRunner().invoke(app, ["score", str(images), "--prompts", str(prompts), "--out", str(tmp_path / "x"), "--shard", "3/2"])
    assert result.exit_code == 2 and "1 <= K <= N" in result.output
    result = CliRunner().invoke(app, ["merge", *map(str, shards), "--out", str(tmp_path / "merged")])
    assert result.exit_code == 0, result.output
    assert "merged 2 run(s)" in result.output
    result = CliRunner().invoke(app, ["merge", str(shards[0]), "--out", str(tmp_path / "again")])
    assert result.exit_code == 2 and "2/2 missing" in result.output
