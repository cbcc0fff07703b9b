"""Sharded scoring and merging: N shards scored apart and merged give exactly the rows and problems of one
unsharded run; every unsafe merge is refused before anything is written."""
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support import engine_plugins
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

def test_assignment_is_pinned():
    """Existing shard folders resume only if an image keeps its shard across versions: these values are
    1 + (first 8 bytes of sha256(path), big-endian) mod N, computed by hand; a change here breaks old runs."""
    assert [shard_of(p, 3) for p in ["m1/p0.png", "m1/p1.png", "m2/p0.png", "sdxl/0001_2.jpg"]] == [2, 2, 3, 2]
    assert shard_of("m1/p0.png", 1000) == 693 and shard_of("anything.png", 1) == 1


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


@pytest.mark.slow
def test_unsafe_merges_are_refused_before_writing(tmp_path, fake, workload):
    images, prompts = workload
    shards = score_shards(tmp_path, images, prompts, 2)
    run_score(ScoreConfig(images, prompts, tmp_path / "whole"))
    other = tmp_path / "other.yaml"
    other.write_text("metrics:\n  TR:\n    params:\n      min_confidence: 0.9\n")
    run_score(ScoreConfig(images, prompts, tmp_path / "ontology", ontology=other))
    edited = tmp_path / "edited.vistar"
    edited.write_text(prompts.read_text().replace('"text 3"', '"text three"'))
    run_score(ScoreConfig(images, edited, tmp_path / "prompts"))
    run_score(ScoreConfig(images, prompts, tmp_path / "angles", angles=["TR"]))
    cases = {
        "given twice": [shards[0], shards[1], shards[0]],
        "unsharded": [tmp_path / "whole", shards[0]],
        "differ in ontology_hash": [tmp_path / "whole", tmp_path / "ontology"],
        "differ in prompts_sha256": [tmp_path / "whole", tmp_path / "prompts"],
        "differ in angles": [tmp_path / "whole", tmp_path / "angles"],
    }
    for message, runs in cases.items():
        with pytest.raises(MergeError, match=message):
            merge_runs(runs, tmp_path / "out")
        assert not (tmp_path / "out").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(MergeError, match="not an empty folder"):
        merge_runs(shards, tmp_path / "full")


def test_shards_of_a_folder_that_changed_between_them_are_refused(tmp_path, fake, workload):
    images, prompts = workload
    run_score(ScoreConfig(images, prompts, tmp_path / "s1", shard=parse_shard("1/2")))
    Image.new("RGB", (8, 8)).save(images / "m2" / "p0_1.png")  # a new sample arrives before shard 2 runs
    run_score(ScoreConfig(images, prompts, tmp_path / "s2", shard=parse_shard("2/2")))
    with pytest.raises(MergeError, match="differ in work_digest"):
        merge_runs([tmp_path / "s1", tmp_path / "s2"], tmp_path / "out")


def test_metric_versions_must_agree_name_by_name(tmp_path, fake, workload):
    images, prompts = workload
    shards = score_shards(tmp_path, images, prompts, 2)
    meta = json.loads((shards[1] / "run.json").read_text())
    name = sorted(meta["metric_versions"])[0]
    meta["metric_versions"][name] += "-new"
    (shards[1] / "run.json").write_text(json.dumps(meta))
    with pytest.raises(MergeError, match=f"differ in metric_versions.{name}"):
        merge_runs(shards, tmp_path / "out")
    del meta["metric_versions"][name]  # a shard that never used a metric does not disagree about it
    (shards[1] / "run.json").write_text(json.dumps(meta))
    merge_runs(shards, tmp_path / "out")


def test_stage_precisions_must_agree_name_by_name(tmp_path, fake, workload):
    images, prompts = workload
    shards = score_shards(tmp_path, images, prompts, 2)
    for shard, precision in zip(shards, ("fp32", "bf16")):
        meta = json.loads((shard / "run.json").read_text())
        meta["stage_precisions"] = {"depth": precision}
        (shard / "run.json").write_text(json.dumps(meta))
    with pytest.raises(MergeError, match="differ in stage_precisions.depth"):
        merge_runs(shards, tmp_path / "out")
    meta["stage_precisions"] = {"clip_embed": "bf16"}   # a stage the other shard never ran does not disagree
    (shards[1] / "run.json").write_text(json.dumps(meta))
    merge_runs(shards, tmp_path / "out")
    assert json.loads((tmp_path / "out" / "run.json").read_text())["stage_precisions"] == {"clip_embed": "bf16", "depth": "fp32"}


def test_a_source_being_scored_is_refused(tmp_path, fake, workload):
    import fcntl

    images, prompts = workload
    shards = score_shards(tmp_path, images, prompts, 2)
    with open(shards[0] / ".lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        with pytest.raises(MergeError, match="a `vistar score` is writing this run"):
            merge_runs(shards, tmp_path / "out")


def test_an_interrupted_merge_leaves_no_run_folder(tmp_path, fake, workload, monkeypatch):
    from vistar.engine.store import ResultStore

    images, prompts = workload
    shards = score_shards(tmp_path, images, prompts, 2)
    append = ResultStore.append
    calls = []

    def crash_on_second(self, table):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return append(self, table)

    monkeypatch.setattr(ResultStore, "append", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        merge_runs(shards, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir() if "out" in p.name) == []
    monkeypatch.setattr(ResultStore, "append", append)
    merge_runs(shards, tmp_path / "out")
    assert len(read_scores(tmp_path / "out")) == sum(len(read_scores(s)) for s in shards)


def test_overlapping_runs_are_refused(tmp_path, fake, workload):
    """Two machines given copies of the same model folder: same (image, model, prompt, sample, metric) twice."""
    images, prompts = workload
    copy = tmp_path / "copy"
    shutil.copytree(images / "m1", copy / "m1")
    run_score(ScoreConfig(images, prompts, tmp_path / "a"))
    run_score(ScoreConfig(copy, prompts, tmp_path / "b"))
    with pytest.raises(MergeError, match=r"the same row is in .*a and .*b \(image=m1/p\d+\.png.* more: the runs overlap"):
        merge_runs([tmp_path / "a", tmp_path / "b"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


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
        assert result.exit_code == 3, result.output  # PARTIAL: the workload has a prompt that does not parse
    assert json.loads((shards[1] / "run.json").read_text())["shard"] == {"index": 2, "count": 2}
    result = CliRunner().invoke(app, ["score", str(images), "--prompts", str(prompts), "--out", str(tmp_path / "x"), "--shard", "3/2"])
    assert result.exit_code == 2 and "1 <= K <= N" in result.output
    result = CliRunner().invoke(app, ["merge", *map(str, shards), "--out", str(tmp_path / "merged")])
    assert result.exit_code == 0, result.output
    assert "merged 2 run(s)" in result.output
    result = CliRunner().invoke(app, ["merge", str(shards[0]), "--out", str(tmp_path / "again")])
    assert result.exit_code == 2 and "2/2 missing" in result.output


def test_runs_of_disjoint_folders_merge_and_calibration_finds_images_under_each_root(tmp_path, fake, workload):
    """One model per machine, each mounting its folder elsewhere: the merged run keeps both roots, and a
    preference file naming images by absolute path resolves under either."""
    from vistar.calibration.pairs import image_resolver

    images, prompts = workload
    for model, root in (("m1", tmp_path / "a"), ("m2", tmp_path / "b")):
        shutil.copytree(images / model, root / model)
        run_score(ScoreConfig(root, prompts, tmp_path / f"run_{model}"))
    merge_runs([tmp_path / "run_m1", tmp_path / "run_m2"], tmp_path / "merged")
    meta = json.loads((tmp_path / "merged" / "run.json").read_text())
    assert meta["images"] == [str((tmp_path / "a").resolve()), str((tmp_path / "b").resolve())]
    resolve = image_resolver(read_scores(tmp_path / "merged"), tmp_path / "merged")
    assert resolve(str((tmp_path / "a" / "m1" / "p3.png").resolve())) == "m1/p3.png"
    assert resolve(str((tmp_path / "b" / "m2" / "p4.png").resolve())) == "m2/p4.png"
    assert resolve(str((tmp_path / "c" / "m1" / "p3.png").resolve())) is None  # under no root of the run


def test_shards_written_inside_the_image_folder_are_not_models(tmp_path, fake, workload):
    """`vistar score . --out s2 --shard 2/2` beside an earlier `s1/`: s1 is a run folder, not a model."""
    images, prompts = workload
    run_score(ScoreConfig(images, prompts, images / "s1", shard=parse_shard("1/2")))
    run_score(ScoreConfig(images, prompts, images / "s2", shard=parse_shard("2/2")))
    assert not any("s1" in str(item) for _, item in problems(images / "s2"))
    assert set(read_scores(images / "s2").model) == {"m1", "m2"}


def test_sharding_refuses_manifest_images_given_by_absolute_path(tmp_path, fake, workload):
    images, prompts = workload
    outside = tmp_path / "elsewhere.png"
    Image.new("RGB", (8, 8)).save(outside)
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"image,prompt_id,model\nm1/p0.png,p0,m1\n{outside},p1,m1\n")
    with pytest.raises(ValueError, match=r"--shard needs every image inside IMAGES \(the manifest gives .*elsewhere.png"):
        run_score(ScoreConfig(images, prompts, tmp_path / "run", manifest=manifest, shard=parse_shard("1/2")))
    run_score(ScoreConfig(images, prompts, tmp_path / "whole", manifest=manifest))  # fine without --shard


def test_shards_that_loaded_another_weight_are_refused_even_after_a_resume(tmp_path, monkeypatch, workload):
    """run.json's `models` keeps the weights earlier invocations loaded: a resume that loads nothing (every row
    reused) must not forget them, or merge would take rows of two weights as one evaluation."""
    monkeypatch.setitem(engine_plugins.FEATURES, "fake_stats", "tests.support.engine_plugins:STAGE_LOADING")
    engine_plugins.install(monkeypatch)
    first, second = score_shards(tmp_path, *workload, 2)
    monkeypatch.setitem(engine_plugins.WEIGHT_SHA, "fake-weight", "b" * 64)
    shutil.rmtree(second)
    run_score(ScoreConfig(*workload, second, shard=parse_shard("2/2")))
    with pytest.raises(MergeError, match=re.escape(f"fake-weight: {first} ran it with sha256 {'a' * 64}, {second} with {'b' * 64}")):
        merge_runs([first, second], tmp_path / "merged")
    resumed = run_score(ScoreConfig(*workload, first, shard=parse_shard("1/2")))
    assert resumed.scored == 0 and resumed.reused > 0     # nothing loaded in this invocation
    assert json.loads((first / "run.json").read_text())["models"]["fake-weight"]["sha256"] == "a" * 64
    with pytest.raises(MergeError, match="ran it with sha256"):
        merge_runs([first, second], tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_merging_an_unfinished_run_with_partial_exits_3_and_partial_ok_exits_0(tmp_path, fake, workload):
    run = tmp_path / "run"
    run_score(ScoreConfig(*workload, run))
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "status": "interrupted"}))   # as Ctrl-C leaves it
    result = CliRunner().invoke(app, ["merge", str(run), "--out", str(tmp_path / "refused")])
    assert result.exit_code == 2 and "unfinished run(s)" in result.output
    result = CliRunner().invoke(app, ["merge", str(run), "--out", str(tmp_path / "merged"), "--partial"])
    assert result.exit_code == 3, result.output
    assert "unfinished run(s)" in result.output and "(interrupted)" in result.output
    assert json.loads((tmp_path / "merged" / "run.json").read_text())["status"] == "partial"
    result = CliRunner().invoke(app, ["merge", str(run), "--out", str(tmp_path / "ok"), "--partial", "--partial-ok"])
    assert result.exit_code == 0, result.output


def test_merged_run_json_says_where_the_shards_ran(tmp_path, fake, workload):
    first, second = score_shards(tmp_path, *workload, 2)
    merge_runs([first, second], tmp_path / "same")
    meta = json.loads((tmp_path / "same" / "run.json").read_text())
    source = json.loads((first / "run.json").read_text())
    assert (meta["device"], meta["device_requested"], meta["stage_devices"]) == ("cpu", "cpu", source["stage_devices"])
    assert source["stage_devices"] == {"fake_stats": "cpu"}
    other = json.loads((second / "run.json").read_text())   # as a shard scored on a GPU machine records it
    (second / "run.json").write_text(json.dumps({**other, "device": "cuda:0", "stage_devices": {"fake_stats": "cuda:0"}}))
    merge_runs([first, second], tmp_path / "mixed")
    meta = json.loads((tmp_path / "mixed" / "run.json").read_text())
    assert (meta["device"], meta["stage_devices"]) == ("cpu, cuda:0", {"fake_stats": "cpu, cuda:0"})
