"""Decode prefetch: images decode while earlier batches are scored, and nothing about the results changes."""
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from tests.support import engine_plugins, pipeline_helpers
from vistar.engine import prefetch
from vistar.engine.prefetch import Prefetcher
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

COLUMNS = ["image", "image_sha256", "model", "prompt_id", "sample", "metric", "score", "status", "error", "details", "key"]


def _scene(folder: Path, n: int, names=None) -> Path:
    lines = []
    for i in range(n):
        name = (names or {}).get(i, f"p{i}")
        model_dir = folder / "imgs" / ("a" if i % 2 else "b")
        model_dir.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (10 + i, 8), (i * 20 % 256, 200 - i * 9, 50)).save(model_dir / f"{name}.png")
        lines.append(f'{name}: [GD|TR] sign "{i}"')
    (folder / "p.vistar").write_text("\n".join(lines) + "\n")
    return folder / "p.vistar"


def _table(run: Path) -> pd.DataFrame:
    return read_scores(run)[COLUMNS].sort_values(["image", "metric"]).reset_index(drop=True)


@pytest.mark.slow
def test_scores_identical_with_and_without_prefetch_and_workers(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch)
    prompts = _scene(tmp_path, 9)
    (tmp_path / "imgs" / "a" / "p3.png").write_bytes(b"not a png")  # an error row must land in the same place too
    tables = []
    for i, (workers, depth) in enumerate([(0, 0), (0, 2), (2, 2), (2, 0)]):
        run_score(ScoreConfig(tmp_path / "imgs", prompts, tmp_path / f"run{i}", batch_size=2, workers=workers, prefetch=depth))
        tables.append(_table(tmp_path / f"run{i}"))
    assert len(tables[0]) == 18 and (tables[0].status == "error").sum() == 2
    for other in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], other)


def test_prefetcher_yields_batches_in_order_with_bounded_lookahead():
    submitted = []

    class Recording(Prefetcher):
        def _submit(self, path):
            submitted.append(path)
            return super()._submit(path)

    batches = [[f"b{i}-{k}" for k in range(2)] for i in range(5)]
    seen = []
    with Recording(0, 10, depth=2, decode=lambda path, max_pixels: path.upper()) as pf:
        for batch, images in pf.batches(batches, list):
            seen.append((batch, images))
            # while batch n is handed out, batches up to n+2 are queued and none beyond
            assert len(submitted) == 2 * min(len(batches), len(seen) + 2)
    assert seen == [(b, [p.upper() for p in b]) for b in batches]


def _intervals(log: Path) -> list[tuple[float, float]]:
    return [tuple(map(float, line.split()[:2])) for line in log.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("workers,depth", [(2, 2), (0, 2), (2, 0)])
def test_decoding_overlaps_the_stages_only_with_prefetch(tmp_path, monkeypatch, workers, depth):
    pipeline_helpers.install(monkeypatch)
    monkeypatch.setattr(prefetch, "decode_image", pipeline_helpers.slow_decode)
    prompts = _scene(tmp_path, 6)
    run_score(ScoreConfig(tmp_path / "imgs", prompts, tmp_path / "run", batch_size=2, workers=workers, prefetch=depth))
    assert (read_scores(tmp_path / "run").status == "ok").sum() == 6

    decodes = _intervals(pipeline_helpers.decode_log(tmp_path / "imgs" / "a" / "x.png"))
    stages = [(s, e) for s, e, _ in pipeline_helpers.STAGE_LOG]
    assert len(decodes) == 6 and len(stages) == 3
    overlapping = [d for d in decodes if any(d[0] < s_end and s_start < d[1] for s_start, s_end in stages)]
    span = max(e for _, e in stages) - min(s for s, _ in decodes)
    busy = sum(e - s for s, e in decodes) + sum(e - s for s, e in stages)
    if depth == 0:  # decode, then score, then decode the next batch: nothing runs at the same time
        assert overlapping == []
    else:  # batches 1 and 2 decode while batch 0 (and 1) are scored: the run takes less than decode + compute
        assert len(overlapping) >= 2 and span < busy


def test_a_worker_killed_on_one_image_costs_that_image_only(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch)
    monkeypatch.setattr(prefetch, "decode_image", pipeline_helpers.dying_decode)
    prompts = _scene(tmp_path, 7, names={2: "kill2"})
    run_score(ScoreConfig(tmp_path / "imgs", prompts, tmp_path / "run", batch_size=2, workers=2, prefetch=2))
    table = read_scores(tmp_path / "run")
    assert len(table) == 14
    dead = table[table.prompt_id == "kill2"]
    assert (dead.status == "error").all() and dead.error.str.contains("worker process died").all()
    assert (table[table.prompt_id != "kill2"].status == "ok").all()
