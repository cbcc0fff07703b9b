"""sha256 of image files, with a per-run cache so a rerun over a million images does not re-read them all.

The cache (`RUN_DIR/.hashes.parquet`) maps a resolved path to (size, mtime_ns, ctime_ns, inode, sha256); a file
whose stat still matches is not re-read. ctime is there because mtime can be set back: `cp -p` or
`rsync --inplace -t` rewrite the bytes in place and restore the old mtime, but every write moves ctime, and
nothing but the kernel sets it. Entries changed within `RACY_S` of the cache write are not stored (like git's
"racy" index entries) so a same-size rewrite within a coarse filesystem timestamp tick is still caught.
`verify=True` (`vistar score --verify`) ignores the cache and re-reads every file. A call over some files (`--angles`,
one `vistar.Scorer` call) keeps the entries of the others.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..atomic import names_path
from .images import file_sha256, printable_path

CACHE = ".hashes.parquet"
RACY_S = 2.0
_FIELDS = ("size", "mtime_ns", "ctime_ns", "ino")
_SCHEMA = pa.schema([("path", pa.string()), *((f, pa.int64()) for f in _FIELDS), ("sha256", pa.string())])


def _load(run_dir: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    try:
        table = pq.read_table(run_dir / CACHE, schema=_SCHEMA).to_pydict()
    except (OSError, pa.ArrowException, KeyError):
        return {}  # no cache, an unreadable one, or one from before ctime was kept: hash everything
    stats = zip(*(table[f] for f in _FIELDS))
    return {p: (st, h) for p, st, h in zip(table["path"], stats, table["sha256"])}


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def hash_files(paths: list[Path], run_dir: Path | None, threads: int = 4, verify: bool = False) -> dict[Path, str | OSError]:
    """sha256 of each path (or the OSError that prevented reading it); refreshes the cache in `run_dir` (None:
    no cache, e.g. `vistar.Scorer` without a run folder). `verify`: read every file, trusting no cached hash."""
    known = {} if run_dir is None else _load(run_dir)
    cached = {} if verify else known
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
        if hit and hit[0] == _identity(st):
            result[path] = hit[1]
        else:
            todo.append(path)

    def one(path: Path) -> str | OSError:
        try:
            return file_sha256(path)
        except OSError as exc:
            return exc

    with ThreadPoolExecutor(max(1, threads)) as pool:  # hashlib releases the GIL: reading and hashing overlap
        for path, sha in zip(todo, pool.map(one, todo)):
            result[path] = sha
    if run_dir is None:
        return result
    horizon = time.time_ns() - int(RACY_S * 1e9)
    looked = {printable_path(str(p)) for p in dict.fromkeys(paths)}   # the entries of files not looked at are kept
    rows = [{"path": p, **dict(zip(_FIELDS, st)), "sha256": h} for p, (st, h) in known.items() if p not in looked]
    rows += [{"path": printable_path(str(p)), **dict(zip(_FIELDS, _identity(st))), "sha256": result[p]}
             for p, st in stats.items() if isinstance(result[p], str) and max(st.st_mtime_ns, st.st_ctime_ns) < horizon]
    tmp = run_dir / f".{CACHE}.tmp"
    with names_path(run_dir / CACHE):
        pq.write_table(pa.Table.from_pylist(rows, schema=_SCHEMA), tmp)
    os.replace(tmp, run_dir / CACHE)
    return result
