"""`vistar calibrate RUN_DIR --pairs PAIRS.csv [--fit]`: agreement of the run's metrics with human preferences."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ..ontology import Ontology, OntologyError
from .common import OntologyOpt, WeightsOpt, fail, out, print_table, say
from .exit_codes import ExitCode, os_error_code


def _f(v, digits=3) -> str:
    return "—" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"


def calibrate(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="Run directory written by `vistar score`"),
    pairs: Path = typer.Option(..., "--pairs", exists=True, dir_okay=False, help="CSV: image_a,image_b,preferred(a|b|tie)[,angle,rater,role]"),
    fit: bool = typer.Option(False, "--fit", help="Fit tunable parameters (optuna TPE) for PPA; writes weights.yaml"),
    out_dir: Optional[Path] = typer.Option(None, "--out", file_okay=False, help="Output folder (default RUN_DIR/calibration)"),
    ontology: Optional[Path] = OntologyOpt,
    weights: Optional[Path] = WeightsOpt,
    seed: int = typer.Option(0, "--seed", help="Seed for bootstrap, split and optimiser"),
    resamples: int = typer.Option(1000, "--resamples", min=100, help="Bootstrap resamples per CI"),
    trials: int = typer.Option(60, "--trials", min=1, help="Optimiser trials per fitted target"),
    test_fraction: float = typer.Option(0.3, "--test-fraction", min=0.0, max=0.9, help="Share of image pairs held out"),
    min_pairs: int = typer.Option(50, "--min-pairs", min=1, help="Fewest non-tie training judgments to fit on"),
    dedupe: str = typer.Option("error", "--dedupe", help="Several ok rows for one (image, metric): 'error' (name them "
                               "and stop) or 'latest' (keep the newest shard's row)"),
) -> None:
    """PPA, tie-calibrated acc23, Kendall τ-b (bootstrap CIs), McNemar, Krippendorff's α, Bradley–Terry; --fit.

    Exit 4 when no judgment is usable (each left-out line is named), 2 for other unusable input."""
    from ..calibration import calibrate as run_calibration, write_outputs
    from ..calibration.calibrate import DEDUPE, NothingUsable
    from ..calibration.pairs import PairsError
    from ..engine.runmeta import run_status_notes

    if dedupe not in DEDUPE:
        fail(f"--dedupe must be one of {', '.join(DEDUPE)}, not '{dedupe}'")
    try:
        onto = Ontology.load(ontology, overrides=[weights] if weights else None)
        result = run_calibration(run_dir, pairs, onto, fit=fit, seed=seed, resamples=resamples, trials=trials,
                                 test_fraction=test_fraction, min_pairs=min_pairs, dedupe=dedupe)
    except NothingUsable as exc:
        fail(str(exc), ExitCode.NOTHING_SCORED)  # the reasons: each left-out line
    except (OntologyError, PairsError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    for note in run_status_notes(run_dir):  # an unfinished or partial run: the agreement covers part of the work
        say(f"run: {note}", "yellow")
    for problem in result.problems:  # they quote the pairs file: escaped, never read as markup
        say(f"pairs: {problem}", "yellow")
    for warning in result.warnings:
        say(f"warning: {warning}", "yellow")
    print_table(agreement_table(result))
    for r in result.mcnemar.itertuples():
        out.print(f"McNemar {r.metric_a} vs {r.metric_b}: b={r.b} c={r.c} exact p={r.p_exact:.4g}", highlight=False)
    agreement = result.agreement
    if "alpha_nominal" in agreement:
        out.print(f"Krippendorff's α over {agreement['raters']} raters and {agreement['units']} units (pair, angle, role): "
                  f"nominal {_f(agreement['alpha_nominal'])}, ordinal {_f(agreement['alpha_ordinal'])}", highlight=False)
    if agreement.get("note"):
        say(f"agreement: {agreement['note']}", "yellow")
    if len(result.bradley_terry):
        out.print("Bradley–Terry log-strengths:\n" + result.bradley_terry.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for f in result.fits:
        out.print(f"fit {f.target}: {f.params_before} -> {f.params_after}; PPA train {_f(f.train_ppa_before)} -> "
                  f"{_f(f.train_ppa_after)}, held-out {_f(f.test_ppa_before)} -> {_f(f.test_ppa_after)}", highlight=False)
    for msg in result.refusals:
        say(f"not fitted: {msg}", "yellow")
    try:
        paths = write_outputs(result, out_dir or run_dir / "calibration")
    except OSError as exc:  # e.g. an output folder that cannot be written
        fail(str(exc), os_error_code(exc))
    out.print(f"wrote {', '.join(str(p) for p in paths.values())}", highlight=False)
    if fit and not result.fits:
        fail("nothing was fitted (see the messages above); no weights file written")


def agreement_table(result) -> Table:
    """One row per metric: judgments it could use (n), PPA and τ-b each over its 95% CI, acc23 over its ε; the
    second line keeps the table within 80 columns for metric names up to 19 characters."""
    table = Table(title=f"agreement with {result.n_judgments} human judgments (95% bootstrap CI over image pairs)")
    for col in ("metric", "n", "PPA", "acc23 (ε)", "τ-b"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for r in result.metrics.itertuples():
        table.add_row(r.metric, str(r.judgments), f"{_f(r.ppa)}\n[{_f(r.ppa_ci_low)}, {_f(r.ppa_ci_high)}]",
                      f"{_f(r.acc23)}\n({_f(r.epsilon, 4)})", f"{_f(r.tau_b)}\n[{_f(r.tau_b_ci_low)}, {_f(r.tau_b_ci_high)}]")
    return table
