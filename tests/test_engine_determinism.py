"""Same inputs -> identical scores, whatever the batch size or number of decode workers, rerun after rerun."""
import shutil
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image, ImageDraw

from tests.support import engine_plugins
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

REPO = Path(__file__).resolve().parents[1]
COLUMNS = ["image", "image_sha256", "model", "prompt_id", "sample", "role", "angle", "metric", "score", "status",
           "error", "details", "set", "metric_version", "key"]


def _table(run: Path) -> pd.DataFrame:
    """The rows as a reader gets them, in the order it gets them: that order is part of what must not change."""
    return read_scores(run)[COLUMNS].reset_index(drop=True)


def _stored(run: Path) -> pd.DataFrame:
    """The rows in the order the store holds them (what plain pandas or DuckDB reads)."""
    return pd.read_parquet(run / "scores.parquet")[COLUMNS].reset_index(drop=True)


def _scene(folder: Path, n: int) -> Path:
    """n small distinct images split over two models; p3's TR.odd returns NaN and p5 is truncated (error rows)."""
    lines = []
    for i in range(n):
        im = Image.new("RGB", (24 + i, 16), (i * 9 % 256, 255 - i * 7 % 256, i * 31 % 256))
        ImageDraw.Draw(im).line((0, 0, 23 + i, 15), fill=(i, i, i))
        model_dir = folder / "imgs" / ("a" if i % 2 else "b")
        model_dir.mkdir(parents=True, exist_ok=True)
        im.save(model_dir / f"p{i}.png")
        lines.append(f'p{i}: [GD|TR] sign "{i}"' + (' {odd="nan"}' if i == 3 else ""))
    (folder / "imgs" / "a" / "p5.png").write_bytes((folder / "imgs" / "a" / "p5.png").read_bytes()[:60])  # truncated
    (folder / "p.vistar").write_text("\n".join(lines) + "\n")
    return folder / "p.vistar"


def test_identical_across_batch_sizes_workers_and_reruns(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch)
    prompts = _scene(tmp_path, 11)
    tables, stored = [], []
    for i, (batch, workers) in enumerate([(1, 0), (3, 0), (8, 0), (3, 2), (1, 0)]):
        run = tmp_path / f"run{i}"
        run_score(ScoreConfig(tmp_path / "imgs", prompts, run, batch_size=batch, workers=workers))
        tables.append(_table(run))
        stored.append(_stored(run))
    assert len(tables[0]) == 22 and (tables[0].status == "ok").sum() == 19  # p3's NaN and truncated p5 are errors
    assert tables[0][tables[0].prompt_id == "p5"].error.str.contains("corrupt or truncated").all()
    for other in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], other)
    for other in stored[1:]:   # a batch's decode-error rows sit where their image is, not ahead of its good rows
        pd.testing.assert_frame_equal(stored[0], other)
    assert engine_plugins.CALLS[:10] == [1] * 10  # batch size 1 really ran one (decodable) image per stage call
    raw = pd.read_parquet(tmp_path / "run0" / "scores.parquet")  # plain pandas sees the same rows
    assert len(raw) == 22 and set(raw.key) == set(tables[0].key)


@pytest.mark.slow
def test_real_tr_identical_across_batch_sizes_and_workers(tmp_path):
    src = REPO / "examples" / "images"  # committed; examples/generate.py rebuilds it
    for model in ("sharp", "typo"):
        (tmp_path / "imgs" / model).mkdir(parents=True)
        for name in ("poster-open.png", "cafe-sign.png"):
            shutil.copy(src / model / name, tmp_path / "imgs" / model / name)
    runs = []
    for i, (batch, workers) in enumerate([(1, 0), (3, 2)]):
        run_score(ScoreConfig(tmp_path / "imgs", REPO / "examples" / "prompts.vistar", tmp_path / f"run{i}",
                              batch_size=batch, workers=workers))
        runs.append(_table(tmp_path / f"run{i}"))
    assert len(runs[0]) == 4 and (runs[0].status == "ok").all()
    pd.testing.assert_frame_equal(runs[0], runs[1])
    sharp = runs[0][runs[0].image.str.startswith("sharp/")]
    assert (sharp.score > 0.9).all()  # the clean renders read back correctly, so this compared real OCR output


def test_a_resumed_run_reads_in_the_same_order_as_a_clean_one(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch)
    prompts = _scene(tmp_path, 9)
    run_score(ScoreConfig(tmp_path / "imgs", prompts, tmp_path / "clean", batch_size=4))
    kept = sorted((tmp_path / "imgs").rglob("*.png"))[::2]
    for path in kept:   # the resumed run first sees half the images, then all of them
        path.rename(path.with_suffix(".hold"))
    run_score(ScoreConfig(tmp_path / "imgs", prompts, tmp_path / "resumed", batch_size=4))
    for path in kept:
        path.with_suffix(".hold").rename(path)
    run_score(ScoreConfig(tmp_path / "imgs", prompts, tmp_path / "resumed", batch_size=4))
    pd.testing.assert_frame_equal(_table(tmp_path / "clean"), _table(tmp_path / "resumed"))
