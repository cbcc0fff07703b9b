"""Hand-built run directories for report and calibration tests: rows written through the real ResultStore."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from vistar.engine.store import ResultStore


def row(model: str, prompt_id: str, angle: str, score: float | None, status: str = "ok", set_: str | None = None,
        role: str = "GD", details: dict | None = None, metric: str | None = None, error: str | None = None,
        sample: int = 0) -> dict:
    image = f"{model}/{prompt_id}" + (f"_{sample}" if sample else "") + ".png"
    metric = metric or angle
    return {"image": image, "image_sha256": hashlib.sha256(image.encode()).hexdigest(), "model": model,
            "prompt_id": prompt_id, "sample": sample, "role": role, "angle": angle, "metric": metric,
            "score": score, "status": status, "error": error, "details": details or {}, "set": set_,
            "metric_version": "1", "key": hashlib.sha256(f"{image}|{metric}".encode()).hexdigest()[:32]}


def write_run(run_dir: Path, rows: list[dict], images: Path | None = None) -> Path:
    ResultStore(run_dir).write(rows)
    (run_dir / "run.json").write_text(json.dumps({"images": str(images or run_dir / "images"), "status": "complete"}))
    return run_dir


# TR and LI scored for models A and B on prompts p and q, and one rater's judgments that agree with them
TWO_ANGLE_JUDGMENTS = [("A/p.png", "B/p.png", "a", "r1", "TR"), ("A/p.png", "B/p.png", "b", "r1", "LI"),
                       ("A/q.png", "B/q.png", "b", "r1", "TR"), ("A/q.png", "B/q.png", "a", "r1", "LI")]


def two_angle_rows() -> list[dict]:
    rows = []
    for pid, (tr_a, li_a) in {"p": (0.9, 0.2), "q": (0.1, 0.7)}.items():
        rows += [row("A", pid, "TR", tr_a), row("B", pid, "TR", 0.5), row("A", pid, "LI", li_a), row("B", pid, "LI", 0.5)]
    return rows
