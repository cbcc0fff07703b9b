"""The `shard` column orders writes: a row keeps the number of the shard that first wrote it through compaction,
re-writes (forget) and `vistar merge` (a later source's rows after an earlier's), so the newest row of an image —
what `vistar calibrate --dedupe latest` keeps — stays the newest after a run ends or runs are merged."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from tests.support.scores_builder import row, write_run
from vistar.calibration import calibrate
from vistar.engine.merge import merge_runs
from vistar.engine.store import SCHEMA, ResultStore, details_json, read_scores


def _rescored() -> dict:
    """A/p0.png scored again under another prompt id, lower than its first score (0.9)."""
    again = row("A", "p0", "TR", 0.1)
    again.update(prompt_id="p0b", key="k-again")
    return again


def _order(run) -> dict[tuple[str, str], int]:
    return {(r.image, r.prompt_id): r.shard for r in read_scores(run).itertuples()}


def test_compaction_and_forget_keep_each_rows_write_order(tmp_path):
    store = ResultStore(tmp_path)
    store.write([row("A", "p0", "TR", 0.9)])
    store.write([row("B", "p0", "TR", 0.2)])
    store.compact()   # the end of a first `vistar score`
    store = ResultStore(tmp_path)
    store.write([_rescored()])
    store.compact()   # the end of a second one
    assert _order(tmp_path) == {("A/p0.png", "p0"): 0, ("B/p0.png", "p0"): 1, ("A/p0.png", "p0b"): 3}
    store = ResultStore(tmp_path)
    store.forget({row("B", "p0", "TR", 0.2)["key"]})   # rewrites the shard holding the others
    assert _order(tmp_path) == {("A/p0.png", "p0"): 0, ("A/p0.png", "p0b"): 3}
    store.write([row("C", "p0", "TR", 0.5)])   # a write after all that is newer than every row kept
    assert _order(tmp_path)[("C/p0.png", "p0")] > 3


def test_a_folder_written_by_another_tool_with_no_shard_numbers_orders_its_rows_by_file(tmp_path):
    """Its rows' `shard` is null and a file may lack the store's uuid suffix: each row counts as its file's number,
    whether read, compacted or rewritten, so its later file's row of an image stays the visible one."""
    folder = tmp_path / "scores.parquet"
    folder.mkdir()
    again = {**row("A", "p0", "TR", 0.9), "score": 0.1, "key": "k-again"}
    for name, rows in (("part-000000.parquet", [row("A", "p0", "TR", 0.9)]),
                       ("part-000001-abcdef01.parquet", [again, row("B", "p0", "TR", 0.2)])):
        table = pa.Table.from_pylist([{**r, "details": details_json(r["details"]), "shard": None} for r in rows], schema=SCHEMA)
        pq.write_table(table, folder / name)
    scores = {r.image: (r.score, r.shard) for r in read_scores(tmp_path).itertuples()}
    assert scores == {"A/p0.png": (0.1, 1), "B/p0.png": (0.2, 1)}
    store = ResultStore(tmp_path)   # adopts the folder as its first generation
    store.compact()
    assert {r.image: (r.score, r.shard) for r in read_scores(tmp_path).itertuples()} == scores
    store.forget({row("B", "p0", "TR", 0.2)["key"]})
    assert {r.image: (r.score, r.shard) for r in read_scores(tmp_path).itertuples()} == {"A/p0.png": (0.1, 1)}
    store.write([row("C", "p0", "TR", 0.5)])
    assert _order(tmp_path)[("C/p0.png", "p0")] > 1


def test_merge_puts_a_later_sources_rows_after_an_earlier_sources(tmp_path):
    first = write_run(tmp_path / "r1", [row("A", "p0", "TR", 0.9)])
    ResultStore(first).write([row("B", "p0", "TR", 0.2)])
    later = write_run(tmp_path / "r2", [_rescored()])
    merge_runs([first, later], tmp_path / "merged")
    assert _order(tmp_path / "merged") == {("A/p0.png", "p0"): 0, ("B/p0.png", "p0"): 1, ("A/p0.png", "p0b"): 2}
    merge_runs([later, first], tmp_path / "swapped")
    assert _order(tmp_path / "swapped") == {("A/p0.png", "p0b"): 0, ("A/p0.png", "p0"): 1, ("B/p0.png", "p0"): 2}


def _pairs(path):
    path.write_text("image_a,image_b,preferred\n" + "".join(f"A/p{i}.png,B/p{i}.png,a\n" for i in range(12)))
    return path


def test_dedupe_latest_after_a_merge_keeps_the_later_sources_row(tmp_path):
    rows = [row("A", f"p{i}", "TR", 0.9) for i in range(12)] + [row("B", f"p{i}", "TR", 0.2) for i in range(12)]
    write_run(tmp_path / "r1", rows)
    write_run(tmp_path / "r2", [_rescored()])
    merge_runs([tmp_path / "r1", tmp_path / "r2"], tmp_path / "merged")
    result = calibrate(tmp_path / "merged", _pairs(tmp_path / "pairs.csv"), dedupe="latest", resamples=100)
    assert result.metrics.set_index("metric").loc["TR", "ppa"] == 11 / 12   # A/p0 kept at 0.1 < B's 0.2: one miss


def test_dedupe_latest_after_two_compacted_runs_in_one_folder(tmp_path):
    rows = [row("A", f"p{i}", "TR", 0.9) for i in range(12)] + [row("B", f"p{i}", "TR", 0.2) for i in range(12)]
    run = write_run(tmp_path / "run", rows)
    ResultStore(run).compact()
    store = ResultStore(run)
    store.write([_rescored()])
    store.write([row("C", "p0", "TR", 0.5)])
    store.compact()
    result = calibrate(run, _pairs(tmp_path / "pairs.csv"), dedupe="latest", resamples=100)
    assert result.metrics.set_index("metric").loc["TR", "ppa"] == 11 / 12
