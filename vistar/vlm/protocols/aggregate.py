"""Benchmark-level numbers from the per-image rows in scores.parquet (pure functions of a DataFrame).

Only `ok` rows enter the means; `coverage` says how many rows were ok out of all rows of the metric, so a
partially judged run is never mistaken for a complete one.
"""
from __future__ import annotations

import json
from collections import defaultdict

import pandas as pd

from . import wise_common, wise_legacy, wise_verified


def _rows(df: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, dict]:
    sub = df[df.metric == metric]
    ok = sub[sub.status == "ok"].copy()
    ok["d"] = ok["details"].map(lambda s: json.loads(s) if isinstance(s, str) and s else {})
    coverage = {m: f"{int((g.status == 'ok').sum())}/{len(g)}" for m, g in sub.groupby("model")}
    return ok, coverage


def _means_by(g: pd.DataFrame, detail: str) -> dict:
    """Mean score per value of one details field (category, subject) of one model's ok rows."""
    return g.groupby(g["d"].map(lambda d: d.get(detail)))["score"].mean().to_dict()


def wise(df: pd.DataFrame, metric: str) -> dict:
    weights = wise_legacy.OVERALL_WEIGHTS if metric == "wiscore.legacy" else wise_verified.OVERALL_WEIGHTS
    ok, coverage = _rows(df, metric)
    out = {}
    for model, g in ok.groupby("model"):
        cats = _means_by(g, "category")
        out[model] = {"categories": cats, "overall": wise_common.weighted_overall(cats, weights), "coverage": coverage.get(model)}
    return out


def genexam(df: pd.DataFrame) -> dict:
    out: dict = defaultdict(dict)
    for metric in ("genexam.strict", "genexam.relaxed"):
        ok, coverage = _rows(df, metric)
        for model, g in ok.groupby("model"):
            subjects = _means_by(g, "subject")  # overall: unweighted mean over subjects, as the benchmark's cal_score.py
            out[model][metric] = {"subjects": subjects, "overall": sum(subjects.values()) / len(subjects), "coverage": coverage.get(model)}
    return dict(out)


def unieval(df: pd.DataFrame) -> dict:
    """Accuracy per L2 tag, averaged into L1 and L1 into L0; UniScore = mean over L1 tags. Case score: per prompt
    the share of right answers over all its images, averaged over prompts (the benchmark's case-UniScore)."""
    ok, coverage = _rows(df, "uniscore")
    out = {}
    for model, g in ok.groupby("model"):
        l2: dict[tuple, list[bool]] = defaultdict(list)
        letters: dict[str, int] = defaultdict(int)
        per_prompt: dict[str, list[bool]] = defaultdict(list)   # every answer on every image of the prompt
        for pid, d in zip(g["prompt_id"], g["d"]):
            for a in d.get("answers", []):
                l2[tuple(a["tags"])].append(bool(a["correct"]))
                letters[a["got"] or "invalid"] += 1
                per_prompt[pid].append(bool(a["correct"]))
        cases = [v for v in per_prompt.values() if v]
        l2_acc = {t: sum(v) / len(v) for t, v in l2.items()}
        l1_acc = _roll_up(l2_acc)
        l0_acc = _roll_up(l1_acc)
        total = sum(letters.values())
        out[model] = {"uniscore": sum(l1_acc.values()) / len(l1_acc) if l1_acc else None,
                      "l0": {t0: acc for (t0,), acc in l0_acc.items()},
                      "l1": {" / ".join(t): a for t, a in l1_acc.items()},
                      "l2": {" / ".join(t): a for t, a in l2_acc.items()},
                      "case_score": sum(sum(v) / len(v) for v in cases) / len(cases) if cases else None,
                      "prompts_all_right": sum(all(v) for v in cases) / len(cases) if cases else None,
                      "options": {k: v / total for k, v in sorted(letters.items())} if total else {},
                      "invalid_rate": letters.get("invalid", 0) / total if total else None,
                      "coverage": coverage.get(model)}
    return out


def _roll_up(accuracy: dict[tuple, float]) -> dict[tuple, float]:
    """One tag level up: each parent's accuracy is the plain mean of its children's, so a tag with many
    questions weighs no more than a sibling with few."""
    children: dict[tuple, list[float]] = defaultdict(list)
    for tags, acc in accuracy.items():
        children[tags[:-1]].append(acc)
    return {tags: sum(v) / len(v) for tags, v in children.items()}


def phybench(df: pd.DataFrame) -> dict:
    """Per category: mean of phy/3 and of scene/2 over images; overall: mean over categories (our interpretation)."""
    out: dict = defaultdict(dict)
    for metric in ("phybench.phy", "phybench.scene"):
        ok, coverage = _rows(df, metric)
        for model, g in ok.groupby("model"):
            cats = _means_by(g, "category")
            out[model][metric] = {"categories": cats, "overall": sum(cats.values()) / len(cats), "coverage": coverage.get(model)}
    return dict(out)


def summarize(protocol: str, df: pd.DataFrame) -> dict:
    if protocol in ("wise-legacy", "wise-verified"):
        return wise(df, "wiscore.legacy" if protocol == "wise-legacy" else "wiscore.verified")
    return {"genexam": genexam, "unieval": unieval, "phybench": phybench}[protocol](df)
