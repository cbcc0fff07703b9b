"""Whole-file writes that readers and crashes never see half-done: every output a run, report or
calibration leaves behind is written to a hidden sibling and renamed over the target (atomic on POSIX)."""
from __future__ import annotations

import os
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
