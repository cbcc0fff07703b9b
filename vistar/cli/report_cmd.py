"""`vistar report RUN_DIR`: per model × angle scores with CIs, role-weighted scores, rankings, Core/Hard/Drop."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..ontology import Ontology, OntologyError
from .common import OntologyOpt, WeightsOpt, fail, out, printable
from .exit_codes import os_error_code


def report(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, metavar="RUN_DIR", help="Run directory written by `vistar score`"),
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
    except OSError as exc:  # e.g. an output folder that cannot be written
        fail(str(exc), os_error_code(exc))
    except (OntologyError, ValueError) as exc:
        fail(str(exc))
    for note in data.notes + data.ranking_notes:
        out.print(printable(f"- {note}"), highlight=False, markup=False, soft_wrap=True)
    _print_summary(data)
    out.print(printable(f"report: {paths['html']}  (also {paths['markdown'].name}, tables/*.csv, {paths['duckdb'].name})"),
              highlight=False, markup=False, soft_wrap=True)


def _print_summary(data) -> None:
    """Best model overall and per role, what the numbers cover and what ran: the answer before opening the files."""
    from ..report.summary import best_overall, best_per_role, coverage_line

    out.print(printable(coverage_line(data)), highlight=False, markup=False, soft_wrap=True)
    out.print(f"best overall: {printable(best_overall(data) or 'no model has a score')}", highlight=False,
              markup=False, soft_wrap=True)
    out.print("best model per role (score; share of the role's weight scored):", highlight=False)
    for line in best_per_role(data):
        out.print(printable(f"  {line}"), highlight=False, markup=False, soft_wrap=True)
    for line in data.judge_templates:  # which benchmark's prompts produced the protocol numbers
        out.print(printable(line), highlight=False, markup=False, soft_wrap=True)
    for line in data.provenance:  # the device and runtimes the numbers came from
        out.print(printable(line), highlight=False, markup=False, soft_wrap=True)
