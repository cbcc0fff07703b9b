"""Shared by the protocol tests: where the public benchmark data lives, and score rows built by hand."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"


def shared(name: str) -> Path:
    path = SHARED / name
    if not path.is_dir():
        pytest.skip(f"public {name} data not found at ../shared/data/{name} (relative to the repository root)")
    return path


def rows(records: list[dict]) -> pd.DataFrame:
    """scores.parquet-like rows: model, prompt_id, metric, score, status, details (JSON text)."""
    return pd.DataFrame([{**r, "status": r.get("status", "ok"), "details": json.dumps(r.get("details", {}))} for r in records])
