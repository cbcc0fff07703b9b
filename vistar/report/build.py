"""`build_report`: read a run's scores, compute the report tables, write HTML, Markdown, CSV and DuckDB."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from ..atomic import write_text_atomic
from ..engine.store import read_scores
from ..ontology import Ontology
from .bootstrap import DEFAULT_RESAMPLES
from .render import angle_detail, render_html, render_markdown, role_table, table3
from .tables import ReportData, build_report_data


def build_report(run_dir: str | Path, out_dir: str | Path | None = None, ontology: Ontology | None = None,
                 seed: int = 0, resamples: int = DEFAULT_RESAMPLES) -> tuple[ReportData, dict[str, Path]]:
    """Write the report files into `out_dir` (default RUN_DIR/report) and return the data and the paths written."""
    run_dir = Path(run_dir)
    if not (run_dir / "scores.parquet").is_dir():
        raise FileNotFoundError(f"{run_dir}: not a run directory (no scores.parquet/); create one with `vistar score`")
    scores = read_scores(run_dir)
    if scores.empty:
        raise ValueError(f"{run_dir}: the run has no scores yet")
    ontology = ontology or Ontology.load()
    data = build_report_data(scores, ontology, seed=seed, resamples=resamples)
    status_notes = run_status_notes(run_dir)
    data.notes[:0] = status_notes
    out = Path(out_dir) if out_dir else run_dir / "report"
    (out / "tables").mkdir(parents=True, exist_ok=True)
    title = f"vistar report — {run_dir.resolve().name}"
    frames = {"overview": table3(data), "angle_scores": data.angle_scores, "overall": data.overall,
              "role_scores": data.role_scores, "role_rankings": role_table(data), "angle_detail": angle_detail(data),
              "skip_reasons": data.skip_reasons,
              "notes": pd.DataFrame({"kind": ["run"] * len(status_notes) + ["coverage"] * (len(data.notes) - len(status_notes))
                                     + ["ranking"] * len(data.ranking_notes),
                                     "note": data.notes + data.ranking_notes})}
    paths = {"html": out / "report.html", "markdown": out / "report.md", "duckdb": out / "report.duckdb",
             "json": out / "report.json"}
    write_text_atomic(paths["html"], render_html(data, title))
    write_text_atomic(paths["markdown"], render_markdown(data, title))
    for name, frame in frames.items():
        paths[f"csv:{name}"] = out / "tables" / f"{name}.csv"
        write_text_atomic(paths[f"csv:{name}"], frame.to_csv(index=False, float_format="%.6g"))
    _write_duckdb(paths["duckdb"], {**frames, "scores": scores})
    write_text_atomic(paths["json"], json.dumps({"run_dir": str(run_dir), **data.summary, "notes": data.notes,
                                            "ranking_notes": data.ranking_notes}, indent=2))
    return data, paths


def run_status_notes(run_dir: Path) -> list[str]:
    """A notice when `RUN_DIR/run.json` does not say the run finished: missing or unreadable (a half-written or
    copied folder), `running` (interrupted, or still being scored), `partial` (`vistar merge --partial`, with its
    missing shards) or any other status; also when the run is one shard of a sharded run."""
    path = run_dir / "run.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [(f"This run has no run.json ({path}): the folder may be half-written or copied without it, so whether "
                 "the run finished is unknown; its scores may cover only part of the work.")]
    except (OSError, ValueError) as exc:
        return [(f"run.json cannot be read ({path}: {exc}): whether the run finished is unknown; its scores may cover "
                 "only part of the work.")]
    if not isinstance(meta, dict):
        return [(f"run.json is not a JSON object ({path}): whether the run finished is unknown; its scores may cover "
                 "only part of the work.")]
    notes = []
    status = meta.get("status")
    if status != "complete":
        what = {"running": ("it was interrupted, or is still being scored; rerun the same `vistar score` command to "
                            "finish it"),
                "partial": "it was merged with `vistar merge --partial` from an incomplete set of runs"}.get(
                    status, "the run did not finish")
        note = f"The run is not complete (run.json status: {status!r}): {what}; its scores cover only part of the work."
        missing = _list(meta.get("missing_shards"))
        merged_from = [m for m in _list(meta.get("merged_from")) if isinstance(m, dict)]
        if missing:
            count = next((m["shard"].get("count") for m in merged_from if isinstance(m.get("shard"), dict)), None)
            shards = ", ".join(f"{k}/{count}" if count else str(k) for k in missing)
            note += f" Missing shards: {shards}."
        unfinished = [f"{m.get('run')} ({m.get('status')})" for m in merged_from if m.get("status") != "complete"]
        if unfinished:
            note += f" Merged from unfinished runs: {', '.join(unfinished)}."
        notes.append(note)
    shard = meta.get("shard")
    if isinstance(shard, dict) and isinstance(shard.get("count"), int) and shard["count"] > 1:
        notes.append(f"This run is shard {shard.get('index')}/{shard.get('count')}: it holds only that shard's images; "
                     "`vistar merge` the shards for the whole work.")
    return notes


def _list(value) -> list:
    """A run.json field that should be a list (a hand-edited or foreign file may hold anything)."""
    return value if isinstance(value, list) else [] if value is None else [value]


def _write_duckdb(path: Path, frames: dict[str, pd.DataFrame]) -> None:
    """One table per frame (plus the raw `scores` rows), replaced atomically so a reader never sees half a file."""
    import duckdb

    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        for name, frame in frames.items():
            con.register("frame_view", frame)
            con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM frame_view')
            con.unregister("frame_view")
    finally:
        con.close()
    os.replace(tmp, path)
