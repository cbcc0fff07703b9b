"""Crash-safe results store: `RUN_DIR/scores.parquet/` is a Parquet dataset of atomically written shards.

Each shard is written to a hidden temp file and renamed into place, so readers (pandas, DuckDB) never see
a partial file. A row's `key` identifies (image, image bytes, prompt, metric, metric version+params);
when a key is re-scored (a `skipped` row retried), the newer shard wins and `compact()` drops the old row.
"""
from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema([
    ("image", pa.string()),
    ("image_sha256", pa.string()),
    ("model", pa.string()),
    ("prompt_id", pa.string()),
    ("sample", pa.int32()),
    ("role", pa.string()),
    ("angle", pa.string()),
    ("metric", pa.string()),
    ("score", pa.float64()),
    ("status", pa.string()),
    ("error", pa.string()),
    ("details", pa.string()),
    ("set", pa.string()),
    ("metric_version", pa.string()),
    ("key", pa.string()),
    ("shard", pa.int64()),
])


class ResultStore:
    def __init__(self, run_dir: str | Path):
        self.dir = Path(run_dir) / "scores.parquet"
        self.dir.mkdir(parents=True, exist_ok=True)
        for stale in self.dir.glob(".*.tmp"):
            stale.unlink()  # a shard whose write was interrupted: never renamed, so never visible
        self._next = 1 + max((self._seq(p) for p in self._shards()), default=-1)

    def _shards(self) -> list[Path]:
        return sorted(self.dir.glob("part-*.parquet"))

    @staticmethod
    def _seq(path: Path) -> int:
        return int(path.name.split("-")[1])

    def existing(self) -> dict[str, str]:
        """key -> status of the newest row per key."""
        table = self.read_table(columns=["key", "status", "shard"])
        keys, statuses = table.column("key").to_pylist(), table.column("status").to_pylist()
        return {keys[i]: statuses[i] for i in _newest_rows(table)}

    def write(self, rows: list[dict]) -> Path | None:
        if not rows:
            return None
        for row in rows:
            row["shard"] = 0
            if isinstance(row.get("details"), dict):
                row["details"] = json.dumps(row["details"], sort_keys=True, ensure_ascii=False, default=_jsonable)
        return self._write_table(pa.Table.from_pylist(rows, schema=SCHEMA))

    def _write_table(self, table: pa.Table) -> Path:
        seq = self._next
        self._next += 1
        table = table.set_column(table.schema.get_field_index("shard"), "shard", pa.array([seq] * len(table), pa.int64()))
        final = self.dir / f"part-{seq:06d}-{uuid.uuid4().hex[:8]}.parquet"
        tmp = self.dir / f".{final.name}.tmp"
        pq.write_table(table, tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        _fsync_dir(self.dir)
        return final

    def read_table(self, columns: list[str] | None = None) -> pa.Table:
        shards = self._shards()
        if not shards:
            return SCHEMA.empty_table().select(columns) if columns else SCHEMA.empty_table()
        return pa.concat_tables([pq.read_table(p, columns=columns, schema=SCHEMA) for p in shards])

    def compact(self) -> None:
        """Drop rows superseded by a newer row with the same key; a no-op when nothing is superseded.
        Crash-safe: the merged shard is written first, old shards removed after; readers dedupe by newest shard."""
        shards = self._shards()
        if len(shards) < 2:
            return
        table = self.read_table()
        keep = _newest_rows(table)
        if len(keep) == len(table):
            return
        self._write_table(table.take(keep))
        for path in shards:
            path.unlink()


def _newest_rows(table: pa.Table) -> list[int]:
    """Row indices of the newest row per key, in stored order."""
    newest: dict[str, int] = {}
    shards = table.column("shard").to_pylist()
    for i, key in enumerate(table.column("key").to_pylist()):
        if key not in newest or shards[i] >= shards[newest[key]]:
            newest[key] = i
    return sorted(newest.values())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _jsonable(value):
    """numpy scalars/arrays and other odd values in `details` become plain JSON."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def read_scores(run_dir: str | Path):
    """The run's scores as a DataFrame, newest row per key (what `report` and `calibrate` read)."""
    table = ResultStore(run_dir).read_table()
    return table.take(_newest_rows(table)).to_pandas()
