"""Crash-safe results store: `RUN_DIR/scores.parquet` is a Parquet dataset that is never partial or duplicated.

Layout: `scores.parquet` is a relative symlink to the live generation `.scores/gen-NNNNNN/`, a folder of
`part-*.parquet` shards. Appending a batch writes a hidden temp file, fsyncs it and renames it into the
live generation, so a reader (pandas, DuckDB, `read_scores`) sees a shard entirely or not at all.
Anything that removes rows (retrying skipped rows, superseding a stale row, merging shards) builds a whole
new generation beside the live one (untouched shards hard-linked) and then swaps the symlink with one
atomic rename, so at every instant the visible dataset has at most one row per key.
Only a writer holding the run lock may construct a writable store (it cleans what a killed run left).
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..atomic import fsync_dir, names_path

if TYPE_CHECKING:   # pandas loads with pyarrow's to_pandas, only when a frame is asked for
    import pandas as pd

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
IDENTITY = ("image", "model", "prompt_id", "sample", "metric")  # one visible row per identity
Identity = tuple[str, str, str, int, str]   # its values, in IDENTITY's order
LINK, GENS = "scores.parquet", ".scores"
MERGED_ROWS = 1_000_000  # rows per shard after compaction
SHARD_NAME = re.compile(r"part-(\d+)(-[0-9a-f]+)?\.parquet")  # what `_write_table` names; anything else is foreign


class ResultStore:
    def __init__(self, run_dir: str | Path, writable: bool = True):
        self.run_dir = Path(run_dir)
        self.link, self.gens = self.run_dir / LINK, self.run_dir / GENS
        if writable:
            self._recover()
        self._next = 1 + max((_seq(p) for p in self._shards()), default=-1)

    # --- layout ------------------------------------------------------------------------
    @property
    def dir(self) -> Path:
        """The live generation folder (or a plain folder written by hand / an older layout)."""
        return self.link.resolve() if self.link.is_symlink() else self.link

    def _shards(self) -> list[Path]:
        return sorted(p for p in self.dir.glob("part-*.parquet") if SHARD_NAME.fullmatch(p.name)) if self.dir.is_dir() else []

    def foreign_files(self) -> list[Path]:
        """`part-*.parquet` files the store did not name (e.g. copied in by hand): never read, so a reader can say so."""
        return sorted(p for p in self.dir.glob("part-*.parquet") if not SHARD_NAME.fullmatch(p.name)) if self.dir.is_dir() else []

    def _recover(self) -> None:
        """Bring the folder to a clean state after a kill: drop unfinished shards and generations,
        point the link at a complete generation, remove generations no longer live."""
        self.gens.mkdir(parents=True, exist_ok=True)
        for junk in self.gens.glob(".tmp-gen-*"):
            shutil.rmtree(junk, ignore_errors=True)
        if self.link.exists() and not self.link.is_symlink():  # plain folder: adopt it as generation 0
            os.replace(self.link, self.gens / "gen-000000")
        if not self.link.exists():
            complete = sorted(self.gens.glob("gen-*"))
            if not complete:
                (self.gens / "gen-000000").mkdir()
                complete = [self.gens / "gen-000000"]
            self._point_to(complete[-1])
        live = self.dir
        for gen in self.gens.glob("gen-*"):
            if gen.resolve() != live:
                shutil.rmtree(gen, ignore_errors=True)
        for stale in live.glob(".*.tmp"):
            stale.unlink()  # a shard whose write was interrupted: never renamed, so never visible

    def _point_to(self, gen: Path) -> None:
        tmp = self.run_dir / f".{LINK}.{uuid.uuid4().hex[:8]}.tmp"
        os.symlink(os.path.relpath(gen, self.run_dir), tmp)
        os.replace(tmp, self.link)
        fsync_dir(self.run_dir)

    # --- reading -----------------------------------------------------------------------
    def read_table(self, columns: list[str] | None = None) -> pa.Table:
        for attempt in range(5):  # a concurrent generation swap can delete files under a reader: read again
            try:
                shards = self._shards()
                if not shards:
                    return SCHEMA.empty_table().select(columns) if columns else SCHEMA.empty_table()
                return pa.concat_tables([_read_shard(p, columns) for p in shards])
            except FileNotFoundError:
                if attempt == 4:
                    raise
        raise AssertionError("unreachable")

    def existing(self) -> dict[Identity, tuple[str, str, str]]:
        """identity -> (key, status, image_sha256) of the visible row."""
        table = self.read_table(columns=[*IDENTITY, "key", "status", "image_sha256", "shard"])
        cols = {c: table.column(c).to_pylist() for c in table.column_names}
        return {(cols["image"][i], cols["model"][i], cols["prompt_id"][i], cols["sample"][i], cols["metric"][i]):
                (cols["key"][i], cols["status"][i], cols["image_sha256"][i]) for i in _newest_rows(table)}

    # --- writing -----------------------------------------------------------------------
    def write(self, rows: list[dict[str, Any]]) -> Path | None:
        """Append one shard atomically. `details` dicts become JSON; what JSON cannot hold is made safe, not fatal."""
        if not rows:
            return None
        for row in rows:
            row["shard"] = 0
            if not isinstance(row.get("details"), str):
                row["details"] = details_json(row.get("details"))
            if row.get("error") is not None:  # a message quoting a path that is not UTF-8 must still be storable
                row["error"] = str(row["error"]).encode("utf-8", "backslashreplace").decode("utf-8")
        return self._write_table(pa.Table.from_pylist(rows, schema=SCHEMA), self.dir)

    def append(self, table: pa.Table) -> Path:
        """Append rows already in the store's schema (another run's visible rows, for `vistar merge`) as one shard,
        keeping their `shard` (the caller numbers them after the rows already here)."""
        return self._write_table(table.select(SCHEMA.names).cast(SCHEMA), self.dir, keep_order=True)

    def _write_table(self, table: pa.Table, folder: Path, keep_order: bool = False) -> Path:
        """A new row's `shard` is this shard's number; a row rewritten (compaction, forget, merge) keeps its own, so
        `shard` orders the writes however often rows move. A file's number is never below its rows' numbers, so
        the next write (numbered after every file) is newer than every row."""
        if keep_order and len(table):
            top = pc.max(table.column("shard")).as_py()   # None when every row's shard is null (appended from elsewhere)
            seq = max(self._next, -1 if top is None else top)
            table = table.set_column(table.schema.get_field_index("shard"), "shard", pc.fill_null(table.column("shard"), seq))
        else:
            seq = self._next
            table = table.set_column(table.schema.get_field_index("shard"), "shard", pa.array([seq] * len(table), pa.int64()))
        self._next = seq + 1
        final = folder / f"part-{seq:06d}-{uuid.uuid4().hex[:8]}.parquet"
        tmp = folder / f".{final.name}.tmp"
        with names_path(final):
            pq.write_table(table, tmp)
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, final)
            fsync_dir(folder)
        return final

    def forget(self, keys: Iterable[str]) -> int:
        """Remove the visible rows with these keys (about to be re-scored), atomically. Returns rows removed."""
        keys = set(keys)
        if not keys:
            return 0
        removed = 0

        def build(new: Path) -> None:
            nonlocal removed
            for shard in self._shards():
                table = _read_shard(shard)
                drop = [k in keys for k in table.column("key").to_pylist()]
                if not any(drop):
                    _link_or_copy(shard, new / shard.name)
                    continue
                removed += sum(drop)
                kept = table.filter(pa.array([not d for d in drop]))
                if len(kept):
                    self._write_table(kept, new, keep_order=True)

        self._new_generation(build)
        return removed

    def compact(self, rows_per_shard: int = MERGED_ROWS, more_than: int = 1) -> None:
        """Merge the small per-batch shards into shards of up to `rows_per_shard` rows (readers open fewer files).
        Shards already at least half that size are kept as they are (hard-linked), so resuming a large run does
        not rewrite it; a no-op unless more than `more_than` shards are small."""
        shards = self._shards()
        if len(shards) <= more_than:
            return
        small = [p for p in shards if pq.ParquetFile(p).metadata.num_rows < rows_per_shard // 2]
        if len(small) <= more_than:
            return
        table = pa.concat_tables([_read_shard(p) for p in small])
        table = table.take(pa.array(_newest_rows(table), pa.int64()))

        def build(new: Path) -> None:
            for shard in shards:
                if shard not in small:
                    _link_or_copy(shard, new / shard.name)
            for start in range(0, len(table), rows_per_shard):
                self._write_table(table.slice(start, rows_per_shard), new, keep_order=True)

        self._new_generation(build)

    def _new_generation(self, build: Callable[[Path], None]) -> None:
        old = self.dir
        number = 1 + max((int(p.name.split("-")[1]) for p in self.gens.glob("gen-*")), default=-1)
        tmp = self.gens / f".tmp-gen-{number:06d}"
        tmp.mkdir()
        build(tmp)
        fsync_dir(tmp)
        final = self.gens / f"gen-{number:06d}"
        os.replace(tmp, final)
        fsync_dir(self.gens)   # the generation's name is on disk before the link points to it
        self._point_to(final)
        shutil.rmtree(old, ignore_errors=True)


def _seq(path: Path) -> int:
    """A shard file's number: `part-NNNNNN-<uuid>.parquet` as the store names it, or `part-NNNNNN.parquet`."""
    found = SHARD_NAME.fullmatch(path.name)
    assert found is not None, path   # _shards() lists only names SHARD_NAME accepts
    return int(found.group(1))


def _read_shard(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A shard's rows; a null `shard` (a file written by hand or another tool) counts as the file's own number, so
    the rows order the same whether read, compacted or rewritten."""
    table = pq.read_table(path, columns=columns, schema=SCHEMA)
    if "shard" not in table.column_names or not table.column("shard").null_count:
        return table
    return table.set_column(table.schema.get_field_index("shard"), "shard", pc.fill_null(table.column("shard"), _seq(path)))


def _newest_rows(table: pa.Table) -> list[int]:
    """Row indices of the newest row (highest shard) per identity, in stored order."""
    newest: dict[tuple[Any, ...], int] = {}
    shards = table.column("shard").to_pylist()
    ident = list(zip(*(table.column(c).to_pylist() for c in IDENTITY)))
    for i, key in enumerate(ident):
        if key not in newest or shards[i] >= shards[newest[key]]:
            newest[key] = i
    return sorted(newest.values())


def _link_or_copy(src: Path, dst: Path) -> None:
    """Hard link (free) where the filesystem allows it, else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _plain(value: Any, path: frozenset[int] = frozenset()) -> Any:
    """Make `value` strict JSON: numpy to lists, non-finite floats to strings, odd keys to str, cycles cut."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf": strict JSON has no such numbers
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if not isinstance(value, (dict, list, tuple, set, frozenset)):
        return repr(value)
    if id(value) in path:
        return "<cycle>"
    inner = path | {id(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v, inner) for k, v in value.items()}
    items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
    return [_plain(v, inner) for v in items]


def details_json(details: object) -> str:
    """`details` as a strict-JSON string (sorted keys); never raises, whatever a metric put in it."""
    try:
        return json.dumps(_plain(details or {}), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return json.dumps({"details_unserializable": f"{type(exc).__name__}: {exc}"})


READ_ORDER = [("model", "ascending"), ("prompt_id", "ascending"), ("sample", "ascending"), ("image", "ascending"),
              ("metric", "ascending")]


def read_visible(run_dir: str | Path) -> pa.Table:
    """The run's rows, one per (image, model, prompt_id, sample, metric): the newest of each, in the canonical order
    (model, prompt_id, sample, image, metric), so what a reader gets does not depend on which run or batch wrote
    which shard (a resumed run, a merge). Read-only."""
    table = ResultStore(run_dir, writable=False).read_table()
    return table.take(pa.array(_newest_rows(table), pa.int64())).sort_by(READ_ORDER)


def read_scores(run_dir: str | Path) -> pd.DataFrame:
    """The run's scores as a DataFrame, one row per (image, model, prompt_id, sample, metric). Read-only."""
    return read_visible(run_dir).to_pandas()
