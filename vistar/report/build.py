"""`build_report`: read a run's scores, compute the report tables, write HTML, Markdown, CSV and DuckDB."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from ..atomic import write_text_atomic
from ..engine.runmeta import run_provenance, run_status_notes
from ..engine.store import read_scores
from ..ontology import Ontology
from .bootstrap import DEFAULT_RESAMPLES
from .render import angle_detail, render_html, render_markdown, role_table, table3
from .tables import ReportData, build_report_data
from .templates import judge_template_lines


def build_report(run_dir: str | Path, out_dir: str | Path | None = None, ontology: Ontology | None = None,
                 seed: int = 0, resamples: int = DEFAULT_RESAMPLES) -> tuple[ReportData, dict[str, Path]]:
    """Write the report files into `out_dir` (default RUN_DIR/report) and return the data and the paths written."""
    run_dir = Path(run_dir)
    if not (run_dir / "scores.parquet").is_dir():
        raise FileNotFoundError(f"{run_dir}: not a run directory (no scores.parquet/); create one with `vistar score`")
    scores = read_scores(run_dir)   # in the store's canonical read order (store.READ_ORDER), as the report's tables
    if scores.empty:
        raise ValueError(f"{run_dir}: the run has no scores yet")
    ontology = ontology or Ontology.load()
    data = build_report_data(scores, ontology, seed=seed, resamples=resamples)
    status_notes = run_status_notes(run_dir)
    data.notes[:0] = status_notes
    data.provenance = run_provenance(run_dir)
    data.judge_templates = judge_template_lines(scores, run_dir)
    out = Path(out_dir) if out_dir else run_dir / "report"
    (out / "tables").mkdir(parents=True, exist_ok=True)
    title = f"vistar report — {run_dir.resolve().name}"
    frames = {"overview": table3(data), "angle_scores": data.angle_scores, "overall": data.overall,
              "role_scores": data.role_scores, "role_rankings": role_table(data), "angle_detail": angle_detail(data),
              "skip_reasons": data.skip_reasons, "other_metrics": data.other_metrics,
              "notes": pd.DataFrame({"kind": ["run"] * len(status_notes) + ["coverage"] * (len(data.notes) - len(status_notes))
                                     + ["ranking"] * len(data.ranking_notes) + ["provenance"] * len(data.provenance)
                                     + ["judge_template"] * len(data.judge_templates),
                                     "note": data.notes + data.ranking_notes + data.provenance + data.judge_templates})}
    paths = {"html": out / "report.html", "markdown": out / "report.md", "duckdb": out / "report.duckdb",
             "json": out / "report.json"}
    write_text_atomic(paths["html"], render_html(data, title))
    write_text_atomic(paths["markdown"], render_markdown(data, title))
    for name, frame in frames.items():
        paths[f"csv:{name}"] = out / "tables" / f"{name}.csv"
        write_text_atomic(paths[f"csv:{name}"], frame.to_csv(index=False, float_format="%.6g"))
    _write_duckdb(paths["duckdb"], {**frames, "scores": scores})
    write_text_atomic(paths["json"], json.dumps({"run_dir": str(run_dir), **data.summary, "notes": data.notes,
                                            "ranking_notes": data.ranking_notes, "provenance": data.provenance,
                                            "judge_templates": data.judge_templates}, indent=2))
    return data, paths


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
