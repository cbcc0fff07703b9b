"""sha256 of image files, with a per-run cache so a rerun over a million images does not re-read them all.

The cache (`RUN_DIR/.hashes.parquet`) maps a resolved path to (size, mtime_ns, inode, sha256); a file whose
stat still matches is not re-read. Entries modified within `RACY_S` of the cache write are not stored (like
git's "racy" index entries) so a same-size rewrite within a coarse filesystem timestamp tick is still caught.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .images import file_sha256, printable_path

CACHE = ".hashes.parquet"
RACY_S = 2.0
_SCHEMA = pa.schema([("path", pa.string()), ("size", pa.int64()), ("mtime_ns", pa.int64()), ("ino", pa.int64()),
                     ("sha256", pa.string())])


def _load(run_dir: Path) -> dict[str, tuple[int, int, int, str]]:
    try:
        table = pq.read_table(run_dir / CACHE, schema=_SCHEMA).to_pydict()
    except (OSError, pa.ArrowException):
        return {}  # no cache, or an unreadable one: hash everything
    return {p: (s, m, i, h) for p, s, m, i, h in zip(table["path"], table["size"], table["mtime_ns"], table["ino"], table["sha256"])}


def hash_files(paths: list[Path], run_dir: Path, threads: int = 4) -> dict[Path, str | OSError]:
    """sha256 of each path (or the OSError that prevented reading it); refreshes the cache in `run_dir`."""
    cached = _load(run_dir)
    result: dict[Path, str | OSError] = {}
    stats: dict[Path, os.stat_result] = {}
    todo = []
    for path in dict.fromkeys(paths):
        try:
            st = stats[path] = os.stat(path)
        except OSError as exc:
            result[path] = exc
            continue
        hit = cached.get(printable_path(str(path)))
        if hit and hit[:3] == (st.st_size, st.st_mtime_ns, st.st_ino):
            result[path] = hit[3]
        else:
            todo.append(path)

    def one(path: Path):
        try:
            return file_sha256(path)
        except OSError as exc:
            return exc

    with ThreadPoolExecutor(max(1, threads)) as pool:  # hashlib releases the GIL: reading and hashing overlap
        for path, sha in zip(todo, pool.map(one, todo)):
            result[path] = sha
    horizon = time.time_ns() - int(RACY_S * 1e9)
    rows = [{"path": printable_path(str(p)), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino, "sha256": result[p]}
            for p, st in stats.items() if isinstance(result[p], str) and st.st_mtime_ns < horizon]
    tmp = run_dir / f".{CACHE}.tmp"
    pq.write_table(pa.Table.from_pylist(rows, schema=_SCHEMA), tmp)
    os.replace(tmp, run_dir / CACHE)
    return result
