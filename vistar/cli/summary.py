"""The per-model summary table printed at the end of `vistar score`."""
from __future__ import annotations

from pathlib import Path

from rich.table import Table

from ..engine.store import read_scores
from .common import out


def summary_frame(run_dir: str | Path):
    """model × metric: mean score (0–100) over ok rows, and counts per status."""
    import pandas as pd

    df = read_scores(run_dir)
    if df.empty:
        return pd.DataFrame()
    ok = df[df.status == "ok"].groupby(["model", "metric"])["score"].mean().mul(100).rename("mean")
    counts = df.pivot_table(index=["model", "metric"], columns="status", values="key", aggfunc="count", fill_value=0)
    frame = pd.concat([ok, counts], axis=1).reset_index()
    return frame.sort_values(["metric", "mean", "model"], ascending=[True, False, True], kind="stable")


def print_summary(run_dir: str | Path) -> None:
    frame = summary_frame(run_dir)
    if frame.empty:
        out.print("no scores yet")
        return
    out.print(f"scores in {run_dir} (mean over ok rows, 0–100):", highlight=False)
    table = Table()
    statuses = [c for c in ("ok", "error", "skipped") if c in frame.columns]
    for col in ["model", "metric", "mean", *statuses]:
        table.add_column(col, justify="left" if col in ("model", "metric") else "right")
    for row in frame.itertuples(index=False):
        mean = getattr(row, "mean")
        table.add_row(row.model, row.metric, "-" if mean != mean else f"{mean:.1f}", *(str(int(getattr(row, s))) for s in statuses))
    out.print(table)
