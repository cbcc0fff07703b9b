"""`vistar report RUN_DIR`: per model × angle scores with CIs, role-weighted scores, rankings, Core/Hard/Drop."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..ontology import Ontology, OntologyError
from .common import OntologyOpt, WeightsOpt, fail, out


def report(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="Run directory written by `vistar score`"),
    out_dir: Optional[Path] = typer.Option(None, "--out", file_okay=False, help="Output folder (default RUN_DIR/report)"),
    ontology: Optional[Path] = OntologyOpt,
    weights: Optional[Path] = WeightsOpt,
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed"),
    resamples: int = typer.Option(1000, "--resamples", min=100, help="Bootstrap resamples per CI"),
) -> None:
    """Write report.html (self-contained), report.md, tables/*.csv and report.duckdb."""
    from ..report import build_report

    try:
        onto = Ontology.load(ontology, overrides=[weights] if weights else None)
        data, paths = build_report(run_dir, out_dir, onto, seed=seed, resamples=resamples)
    except (OntologyError, OSError, ValueError) as exc:  # OSError: e.g. an output folder that cannot be written
        fail(str(exc))
    for note in data.notes + data.ranking_notes:
        out.print(f"- {note}", highlight=False)
    out.print(f"report: {paths['html']}  (also {paths['markdown'].name}, tables/*.csv, {paths['duckdb'].name})", highlight=False)
