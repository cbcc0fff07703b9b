"""Whole-file writes that readers and crashes never see half-done: every output a run, report or
calibration leaves behind is written to a hidden sibling and renamed over the target (atomic on POSIX).
Text UTF-8 cannot hold (the lone surrogates Python uses for a file name that is not UTF-8) is written as a
`\\udcXX` escape, which JSON reads back unchanged, instead of failing the write."""
from __future__ import annotations

import os
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8", errors="backslashreplace")
    os.replace(tmp, path)
