"""What every protocol's benchmark-level aggregation shares (each protocol module owns its own rule, as its
benchmark's evaluation code computes it; docs/judges.md names the file and commit each follows), and the
dispatcher that asks a protocol's declaration for it. Pure functions of the rows in scores.parquet.

Missing items are handled by the upstream rule (an item with no `ok` row: no image, or the judge failed), and
vistar's earlier choice (means over what was scored) is given beside it under a `vistar_` name, labelled as not
comparable with published tables. `coverage` says how many rows were ok out of all rows of the metric, so a
partially judged run is never mistaken for a complete one.
"""
from __future__ import annotations

import json

import pandas as pd

VISTAR_PARTIAL = "vistar: means over the items that were scored; not comparable with published tables"


def ok_rows(df: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, dict]:
    """The metric's ok rows with their details parsed (column `d`), and `coverage` (ok / all) per model."""
    sub = df[df.metric == metric]
    ok = sub[sub.status == "ok"].copy()
    ok["d"] = ok["details"].map(lambda s: json.loads(s) if isinstance(s, str) and s else {})
    coverage = {m: f"{int((g.status == 'ok').sum())}/{len(g)}" for m, g in sub.groupby("model")}
    return ok, coverage


def each_model(df: pd.DataFrame, metric: str, ok: pd.DataFrame):
    """(model, its ok rows) for every model with a row of `metric`, also one whose judge calls all failed (no ok
    row): it is reported with no overall and everything missing, not left out of the summary."""
    for model in sorted(set(df.loc[df.metric == metric, "model"])):
        yield model, ok[ok.model == model]


def means_by(g: pd.DataFrame, detail: str) -> dict:
    """Mean score per value of one details field (category, subject) of one model's ok rows."""
    return g.groupby(g["d"].map(lambda d: d.get(detail)))["score"].mean().to_dict()


def missing_items(g: pd.DataFrame, items) -> int | None:
    """Benchmark items without any ok row for this model (None when the item list is unknown)."""
    return None if items is None else len({str(i.id) for i in items} - set(map(str, g["prompt_id"])))


def weighted_overall(category_means: dict[str, float], weights: dict[str, float]) -> float | None:
    """A headline of fixed category weights (WISE's); None unless every weighted category was scored."""
    if any(c not in category_means for c in weights):
        return None
    return sum(w * category_means[c] for c, w in weights.items())


def summarize(protocol: str, df: pd.DataFrame, items=None) -> dict:
    """The benchmark-level numbers of a run, by the aggregation the protocol's declaration names. The
    declaration is found through the registry's import list, so this module imports no protocol."""
    from ...engine import registry

    return registry.protocol(protocol).aggregate(df, items)
