"""`vistar merge RUN_DIR... --out MERGED`: the shards of a sharded run (or runs over disjoint images) as one run."""
from __future__ import annotations

import sys
from pathlib import Path

import typer

from .common import PartialOkOpt, fail, out, printable
from .exit_codes import ExitCode, os_error_code, partial_or_ok


def merge(
    runs: list[Path] = typer.Argument(..., exists=True, file_okay=False, metavar="RUN_DIR...", help="Run directories written by `vistar score`"),
    out_dir: Path = typer.Option(..., "--out", file_okay=False, help="New run directory (must not exist or be empty)"),
    partial: bool = typer.Option(False, "--partial", help="Also merge unfinished runs and an incomplete set of shards"),
    partial_ok: bool = PartialOkOpt,
) -> None:
    """Merge run folders (e.g. every `--shard K/N`) into one that `vistar report` and `vistar calibrate` read."""
    from ..engine.merge import MergeError, merge_runs

    try:
        summary = merge_runs(runs, out_dir, partial=partial, command=" ".join(sys.argv))
    except MergeError as exc:
        fail(str(exc))
    except OSError as exc:  # a source that cannot be read, an --out that cannot be written
        fail(str(exc), os_error_code(exc))
    rows = ", ".join(f"{n} {status}" for status, n in sorted(summary.rows_by_status.items())) or "no rows"
    out.print(printable(f"merged {len(runs)} run(s) into {out_dir}: {rows}; {summary.problems} problem(s)"),
              highlight=False, markup=False, soft_wrap=True)
    if not summary.rows_by_status:
        fail("nothing merged: the source runs hold no row", ExitCode.NOTHING_SCORED)
    errors = summary.rows_by_status.get("error", 0)
    missing = ", ".join(map(str, summary.missing_shards))
    unfinished = ", ".join(summary.unfinished)
    if summary.missing_shards or summary.unfinished or errors:   # --partial work is partial: exit 3 (docs/cli.md)
        what = "; ".join(filter(None, [missing and f"shard(s) {missing} not merged",
                                       unfinished and f"unfinished run(s) {unfinished}", errors and f"{errors} error rows"]))
        code = partial_or_ok(True, partial_ok)
        out.print(f"partial: {what}; exit {int(code)}", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(int(code))
