"""`vistar merge RUN_DIR... --out MERGED`: the shards of a sharded run (or runs over disjoint images) as one run."""
from __future__ import annotations

import sys
from pathlib import Path

import typer

from .common import fail, out


def merge(
    runs: list[Path] = typer.Argument(..., exists=True, file_okay=False, help="Run directories written by `vistar score`"),
    out_dir: Path = typer.Option(..., "--out", file_okay=False, help="New run directory (must not exist or be empty)"),
    partial: bool = typer.Option(False, "--partial", help="Also merge unfinished runs and an incomplete set of shards"),
) -> None:
    """Merge run folders (e.g. every `--shard K/N`) into one that `vistar report` and `vistar calibrate` read."""
    from ..engine.merge import MergeError, merge_runs

    try:
        summary = merge_runs(runs, out_dir, partial=partial, command=" ".join(sys.argv))
    except (MergeError, OSError) as exc:
        fail(str(exc))
    rows = ", ".join(f"{n} {status}" for status, n in sorted(summary.rows_by_status.items())) or "no rows"
    out.print(f"merged {len(runs)} run(s) into {out_dir}: {rows}; {summary.problems} problem(s)", highlight=False)
    if summary.missing_shards:
        out.print(f"[yellow]partial[/]: shard(s) {', '.join(map(str, summary.missing_shards))} not merged", highlight=False)
