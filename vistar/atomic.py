"""Whole-file writes that readers and crashes never see half-done: every output a run, report or
calibration leaves behind is written to a hidden sibling, synced, and renamed over the target (atomic on POSIX).
Text UTF-8 cannot hold (the lone surrogates Python uses for a file name that is not UTF-8) is written as a
`\\udcXX` escape, which JSON reads back unchanged, instead of failing the write."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    """The bytes are synced before the rename and the folder after it, so a power cut leaves the old file or the
    new one, never a new name on empty or partial bytes."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with names_path(path):
        tmp.write_text(text, encoding="utf-8", errors="backslashreplace")
        with open(tmp, "rb") as fh:   # fsync syncs the file, whichever descriptor asks
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)


def fsync_dir(path: str | Path) -> None:
    """Make a folder's entries (a rename into it) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def names_path(path: str | Path):
    """An OSError raised inside names `path` when it named no file: a failed `write()` or a pyarrow write says only
    `[Errno 28] No space left on device`, and the user must know which disk filled up."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        if exc.errno is None:  # pyarrow: the errno is inside the message
            raise OSError(f"cannot write {path}: {exc}") from exc
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
