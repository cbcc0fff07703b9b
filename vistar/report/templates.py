"""Which judge template family produced each protocol metric's numbers: the benchmark's own prompts
("upstream WISE@eb51174", comparable with its published tables) or vistar's ("vistar-wise-verified-1: not
comparable with published tables"). Read from the rows' `details.template`, so a run folder holding rows of
both families says so; run.json's `judge_templates` adds the family's note (what vistar fills in)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd


def judge_template_lines(scores: pd.DataFrame, run_dir: Path) -> list[str]:
    """One sentence per protocol metric naming its template family (all families, with row counts, when they are
    mixed), then any family run.json names that no row carries (e.g. every row of that run failed)."""
    recorded = _run_json_families(run_dir)
    by_metric: dict[str, Counter] = {}
    tagged = scores[scores["details"].str.contains('"template"', regex=False, na=False)]  # parse only these
    for metric, details in zip(tagged["metric"], tagged["details"]):
        try:
            template = json.loads(details).get("template")
        except (ValueError, AttributeError):
            continue
        if isinstance(template, str) and template:
            by_metric.setdefault(metric, Counter())[_full(template, recorded)] += 1
    lines = []
    for metric, families in sorted(by_metric.items()):
        if len(families) == 1:
            (family, n), = families.items()
            lines.append(f"{metric} ({n} row{'s' * (n != 1)}) judged with {family}.")
        else:
            each = "; ".join(f"{family} ({n} row{'s' * (n != 1)})" for family, n in sorted(families.items()))
            lines.append(f"{metric} mixes judge template families, whose numbers are not comparable with each other: "
                         f"{each}.")
    seen = {family for families in by_metric.values() for family in families}
    lines += [f"run.json: --suite {suite} judged with {family}." for suite, family in sorted(recorded.items())
              if family not in seen]
    return lines


def _full(template: str, recorded: dict[str, str]) -> str:
    """The row's label with the note run.json adds to it ("upstream UniEval@… (the script hands …)")."""
    return next((f for f in recorded.values() if f == template or f.startswith(template + " (")), template)


def _run_json_families(run_dir: Path) -> dict[str, str]:
    try:
        meta = json.loads((Path(run_dir) / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    families = meta.get("judge_templates") if isinstance(meta, dict) else None
    if not isinstance(families, dict):
        return {}
    return {str(k): str(v) for k, v in families.items() if v}
