"""One row per (model, prompt, sample, metric), describing the file on disk: several files for one sample, a file
renamed, and an image rewritten in place with its mtime restored (`cp -p`, `rsync --inplace -t`)."""
import json
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from tests.support import engine_plugins
from vistar.engine import hashes
from vistar.engine.images import file_sha256
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

IDENTITY = ["model", "prompt_id", "sample", "metric"]


@pytest.fixture
def fake(monkeypatch):
    engine_plugins.install(monkeypatch)


def save(path: Path, colour, fmt=None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (16, 16), colour).save(path, fmt)
    return path


def mean_of(path: Path) -> float:
    """What the fake TR metric scores, computed here from the file itself."""
    return float(np.asarray(Image.open(path).convert("RGB")).mean()) / 255.0


def prompt_file(tmp_path: Path) -> Path:
    path = tmp_path / "p.vistar"
    path.write_text('poster-open: [GD|TR] "OPEN"\nother: [GD|TR] "X"\n')
    return path


def problems(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "problems.jsonl").read_text().splitlines()]


def test_several_files_for_one_sample_give_one_row_and_a_problem_naming_all(tmp_path, fake):
    imgs = tmp_path / "imgs"
    files = [save(imgs / "m1" / "poster-open.png", (250, 250, 250)), save(imgs / "m1" / "poster-open.jpg", (20, 120, 40)),
             save(imgs / "m1" / "poster-open_0.png", (0, 0, 0))]
    save(imgs / "m1" / "poster-open_1.png", (90, 90, 90))    # sample 1: its own row
    run = tmp_path / "run"
    run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    df = read_scores(run)
    assert not df.duplicated(IDENTITY).any()
    tr = df[df.metric == "TR"].set_index("sample")
    assert sorted(tr.index) == [0, 1]
    # the first path in code-point order stands for the sample ('.' sorts before '_', 'j' before 'p')
    assert tr.loc[0, "image"] == "m1/poster-open.jpg"
    assert tr.loc[0, "score"] == pytest.approx(mean_of(files[1]))
    assert tr.loc[0, "image_sha256"] == file_sha256(files[1])
    found = {p["item"]: p["message"] for p in problems(run) if p["kind"] == "duplicate_sample"}
    assert sorted(found) == ["m1/poster-open.png", "m1/poster-open_0.png"]
    for message in found.values():
        assert all(f"m1/{f.name}" in message for f in files) and "sample 0" in message
    again = run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    assert again.scored == 0 and read_scores(run).equals(df)


def test_a_file_added_or_renamed_for_a_scored_sample_replaces_its_rows(tmp_path, fake):
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    png = save(imgs / "m1" / "poster-open.png", (250, 250, 250))
    run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    jpg = save(imgs / "m1" / "poster-open.jpg", (20, 120, 40))    # now the first of two files for sample 0
    run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    df = read_scores(run)
    assert not df.duplicated(IDENTITY).any() and set(df.image) == {"m1/poster-open.jpg"}
    jpg.unlink()
    png.rename(imgs / "m1" / "poster-open_0.png")                 # renamed: the same sample under another name
    run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    df = read_scores(run)
    assert not df.duplicated(IDENTITY).any() and set(df.image) == {"m1/poster-open_0.png"}
    assert df[df.metric == "TR"].score.iloc[0] == pytest.approx(250 / 255)


def test_a_removed_file_keeps_its_rows_when_no_other_file_takes_its_sample(tmp_path, fake):
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    save(imgs / "m1" / "other.png", (5, 5, 5))
    gone = save(imgs / "m1" / "poster-open.png", (250, 250, 250))
    run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    gone.unlink()
    run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    assert set(read_scores(run).image) == {"m1/other.png", "m1/poster-open.png"}


def rewrite_in_place(path: Path, colour) -> os.stat_result:
    """New pixels written into the same inode, same size, then the old atime/mtime put back (what `cp -p` onto an
    existing file or `rsync --inplace -t` leave behind)."""
    before = os.stat(path)
    fresh = path.with_name("fresh.bmp")
    save(fresh, colour, "BMP")
    data = fresh.read_bytes()
    fresh.unlink()
    assert len(data) == before.st_size
    with open(path, "r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    return after


def cached_paths(run: Path) -> set[str]:
    return set(pq.read_table(run / hashes.CACHE).column("path").to_pylist())


def test_an_image_rewritten_in_place_with_its_mtime_kept_is_rescored(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(hashes, "RACY_S", 0.0)  # cache files changed just now too, so the cache is what is tested
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    target = save(imgs / "m1" / "poster-open.bmp", (250, 250, 250), "BMP")
    keep = save(imgs / "m1" / "other.bmp", (5, 5, 5), "BMP")
    old = 1_600_000_000 * 10**9
    os.utime(target, ns=(old, old))
    run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    assert cached_paths(run) == {str(target.resolve()), str(keep.resolve())}
    rewrite_in_place(target, (10, 200, 10))
    read = []
    monkeypatch.setattr(hashes, "file_sha256", lambda p: read.append(Path(p).name) or file_sha256(p))
    summary = run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    assert read == ["poster-open.bmp"]                        # only the changed file is read again
    assert summary.scored == 2 and summary.reused == 2        # TR and TR.odd of the rewritten image
    row = read_scores(run).set_index(["image", "metric"]).loc[("m1/poster-open.bmp", "TR")]
    assert row.image_sha256 == file_sha256(target) and row.score == pytest.approx(mean_of(target))


def test_verify_rehashes_what_the_stat_cannot_show(tmp_path, fake, monkeypatch):
    """A change no stat field shows (a filesystem with coarse or unreliable timestamps): only `--verify` sees it."""
    monkeypatch.setattr(hashes, "RACY_S", 0.0)
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    target = save(imgs / "m1" / "poster-open.bmp", (250, 250, 250), "BMP")
    run_score(ScoreConfig(imgs, prompt_file(tmp_path), run))
    old_sha = file_sha256(target)
    after = rewrite_in_place(target, (10, 200, 10))
    cache = pq.read_table(run / hashes.CACHE).to_pylist()     # the cache now agrees with the new stat, old hash
    for entry in cache:
        entry.update(size=after.st_size, mtime_ns=after.st_mtime_ns, ctime_ns=after.st_ctime_ns, ino=after.st_ino)
    pq.write_table(pq.read_table(run / hashes.CACHE).from_pylist(cache, schema=hashes._SCHEMA), run / hashes.CACHE)
    assert run_score(ScoreConfig(imgs, prompt_file(tmp_path), run)).scored == 0
    assert read_scores(run).image_sha256.iloc[0] == old_sha
    from typer.testing import CliRunner

    from vistar.cli import app

    result = CliRunner().invoke(app, ["score", str(imgs), "--prompts", str(prompt_file(tmp_path)), "--out", str(run), "--verify"])
    assert result.exit_code == 0, result.output
    df = read_scores(run)
    assert set(df.image_sha256) == {file_sha256(target)}
    assert df[df.metric == "TR"].score.iloc[0] == pytest.approx(mean_of(target))


def test_a_cache_written_before_ctime_was_kept_is_not_trusted(tmp_path):
    """An older `.hashes.parquet` (no ctime column) is read as no cache: every file is hashed once more."""
    image = save(tmp_path / "a.png", (1, 2, 3))
    st = os.stat(image)
    pq.write_table(pq.read_table(_old_cache(tmp_path, image, st)), tmp_path / hashes.CACHE)
    assert hashes.hash_files([image], tmp_path) == {image: file_sha256(image)}


def _old_cache(folder: Path, image: Path, st: os.stat_result) -> Path:
    import pyarrow as pa

    path = folder / "old.parquet"
    pq.write_table(pa.table({"path": [str(image)], "size": [st.st_size], "mtime_ns": [st.st_mtime_ns],
                             "ino": [st.st_ino], "sha256": ["0" * 64]}), path)
    return path


def test_a_manifest_giving_one_sample_two_files_scores_one(tmp_path, fake):
    flat = tmp_path / "flat"
    save(flat / "b.png", (30, 30, 30))
    save(flat / "a.png", (200, 200, 200))
    (tmp_path / "m.csv").write_text("image,prompt_id,model,sample\nb.png,poster-open,m1,0\na.png,poster-open,m1,0\n"
                                    "b.png,other,m1,\n")
    run = tmp_path / "run"
    run_score(ScoreConfig(flat, prompt_file(tmp_path), run, manifest=tmp_path / "m.csv"))
    df = read_scores(run)
    assert not df.duplicated(IDENTITY).any()
    tr = df[df.metric == "TR"].set_index("prompt_id")
    assert tr.loc["poster-open", "image"] == "a.png" and tr.loc["other", "image"] == "b.png"  # one file, two prompts
    assert tr.loc["poster-open", "score"] == pytest.approx(200 / 255)
    [dup] = [p for p in problems(run) if p["kind"] == "duplicate_sample"]
    assert dup["item"] == "b.png" and "a.png, b.png" in dup["message"]
