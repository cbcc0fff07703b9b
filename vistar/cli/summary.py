"""What `vistar score` prints at the end: the per-model table, then why rows were not scored and what fixes it."""
from __future__ import annotations

import json
import re
from pathlib import Path

from rich.cells import cell_len, set_cell_size
from rich.table import Table

from ..engine.store import read_scores
from .common import out, print_table, printable, safe

WIDTH = 80  # the not-scored lines are cut to this, whatever the terminal: they are read in logs and CI output too


def summary_frame(rows):
    """model × metric: mean score (0–100) over ok rows, and counts per status."""
    import pandas as pd

    if rows.empty:
        return pd.DataFrame()
    ok = rows[rows.status == "ok"].groupby(["model", "metric"])["score"].mean().mul(100).rename("mean")
    counts = rows.pivot_table(index=["model", "metric"], columns="status", values="key", aggfunc="count", fill_value=0)
    frame = pd.concat([ok, counts], axis=1).reset_index()
    return frame.sort_values(["metric", "mean", "model"], ascending=[True, False, True], kind="stable")


def print_summary(run_dir: str | Path):
    """Print the table; returns the run's rows (the caller's exit code and not-scored summary read them)."""
    rows = read_scores(run_dir)
    frame = summary_frame(rows)
    if frame.empty:
        out.print("no scores yet")
        return rows
    out.print(f"scores in {printable(str(run_dir))} (mean over ok rows, 0–100):", highlight=False, markup=False, soft_wrap=True)
    table = Table()
    statuses = [c for c in ("ok", "error", "skipped") if c in frame.columns]
    for col in ["model", "metric", "mean", *statuses]:
        table.add_column(col, justify="left" if col in ("model", "metric") else "right")
    for row in frame.itertuples(index=False):
        mean = getattr(row, "mean")
        table.add_row(safe(row.model), safe(row.metric), "-" if mean != mean else f"{mean:.1f}",
                      *(str(int(getattr(row, s))) for s in statuses))
    print_table(table)
    return rows


def not_scored_lines(rows, width: int = WIDTH) -> list[str]:
    """Skipped and error rows grouped by (status, angle): count, the first reason, and the command that fixes it.

    Rows are taken in `read_scores`' order (model, prompt, sample, image, metric), so "first" is the same on every
    rerun, after a resume and whatever the batch size."""
    if rows.empty:
        return []
    lines = []
    for status in ("skipped", "error"):
        part = rows[rows.status == status]
        for angle, group in part.groupby("angle", sort=True):
            lines += _group_lines(angle, status, group["error"].fillna("").astype(str).tolist(), width)
    if lines:
        lines.insert(0, "not scored (first reason per angle; all reasons are in the rows' `error` field):")
    return lines


def degraded_lines(rows, width: int = WIDTH) -> list[str]:
    """Ok rows that a missing weight left with less evidence (a metric's `details.degraded`), grouped by angle like
    the not-scored lines: an `ok` score counted from less than the run was configured with must not pass unseen."""
    if rows.empty or "details" not in rows:
        return []
    part = rows[(rows.status == "ok") & rows.details.fillna("").str.contains('"degraded"', regex=False)]
    lines = []
    for angle, group in part.groupby("angle", sort=True):
        reasons = [_degraded(d) for d in group.details]
        lines += _group_lines(angle, "ok", [r for r in reasons if r], width)
    if lines:
        lines.insert(0, "scored with less evidence (first reason per angle; rows' `details.degraded`):")
    return lines


def _degraded(details: str) -> str:
    try:
        value = json.loads(details)
    except ValueError:
        return ""
    return str(value.get("degraded") or "") if isinstance(value, dict) else ""


def _group_lines(angle: str, status: str, reasons: list[str], width: int) -> list[str]:
    """One group's two lines: count and first reason, then the command that fixes it."""
    if not reasons:
        return []
    first, others = reasons[0], len(set(reasons)) - 1
    more = f" (+{others} other reason{'s' if others > 1 else ''})" if others else ""
    return [_cut(f"  {angle} {len(reasons)} {status}: " + printable(_cause(first)), width),
            _cut(printable(f"      fix: {fix_for(first, status)}{more}"), width)]


def print_not_scored(rows) -> None:
    """The not-scored lines, then the ok rows scored with less evidence than configured."""
    for line in not_scored_lines(rows) + degraded_lines(rows):
        out.print(line, highlight=False, markup=False, soft_wrap=True)


_HINT = re.compile(r":\s+(?:run|pass|install)\b.*$")
_FETCH = re.compile(r"vistar models fetch (\S+?)`")


def _cause(reason: str) -> str:
    """The reason without its how-to-fix tail (the fix line says it)."""
    return _HINT.sub("", reason) or reason


def fix_for(reason: str, status: str) -> str:
    """The command that turns these rows into scores."""
    if reason.startswith("invalid prompt"):
        return "correct the prompt (`vistar dsl check FILE`), then rerun"
    if fetch := _FETCH.search(reason):
        return f"vistar models fetch {fetch[1]} (or --model-path NAME=PATH)"
    if "no judge configured" in reason:
        return "--judge-url URL --judge-model MODEL_ID (docs/judge.md)"
    if command := re.search(r"`((?:vistar|pip install|--)[^`]*)`", reason):
        return command[1]
    if status == "error":
        return "fix the cause, then rerun with --retry-errors"
    if status == "ok":
        return "fix the cause, then rerun"
    return "fix the cause and rerun (skipped rows are retried on every run)"


def _cut(line: str, width: int) -> str:
    """At most `width` terminal cells (a wide character takes two)."""
    return line if cell_len(line) <= width else set_cell_size(line, width - 1) + "…"
