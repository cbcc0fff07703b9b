"""Benchmark-level numbers from the per-image rows in scores.parquet (pure functions of a DataFrame).

Each benchmark is aggregated as its own evaluation code does (docs/judges.md names the file and commit each
rule follows), missing items included: an item with no `ok` row (no image, or the judge failed) is handled
by the upstream rule, and vistar's earlier choice (means over what was scored) is given beside it under a
`vistar_` name, labelled as not comparable with published tables. `coverage` says how many rows were ok out
of all rows of the metric, so a partially judged run is never mistaken for a complete one.
"""
from __future__ import annotations

import json
from collections import defaultdict

import pandas as pd

VISTAR_PARTIAL = "vistar: means over the items that were scored; not comparable with published tables"


def _rows(df: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, dict]:
    sub = df[df.metric == metric]
    ok = sub[sub.status == "ok"].copy()
    ok["d"] = ok["details"].map(lambda s: json.loads(s) if isinstance(s, str) and s else {})
    coverage = {m: f"{int((g.status == 'ok').sum())}/{len(g)}" for m, g in sub.groupby("model")}
    return ok, coverage


def _means_by(g: pd.DataFrame, detail: str) -> dict:
    """Mean score per value of one details field (category, subject) of one model's ok rows."""
    return g.groupby(g["d"].map(lambda d: d.get(detail)))["score"].mean().to_dict()


def _missing(g: pd.DataFrame, items) -> int | None:
    """Benchmark items without any ok row for this model (None when the item list is unknown)."""
    return None if items is None else len({str(i.id) for i in items} - set(map(str, g["prompt_id"])))


# --- WISE: calculate_verified.py / WISE_legacy/Calculate.py ---------------------------------------------------

WISE_IDS = range(1, 1001)  # the upstream scripts' EXPECTED_PROMPT_RANGES["all"]
# the overall's category weights, as calculate_verified.py and WISE_legacy/Calculate.py weigh them
WISE_WEIGHTS = {"wiscore.verified": {"culture": 0.40, "time": 0.12, "space": 0.12, "biology": 0.12, "physics": 0.12,
                                     "chemistry": 0.12},
                "wiscore.legacy": {"culture": 0.4, "time": 0.167, "space": 0.133, "biology": 0.1, "physics": 0.1,
                                   "chemistry": 0.1}}


def weighted_overall(category_means: dict[str, float], weights: dict[str, float]) -> float | None:
    """The WISE headline: fixed category weights; None unless every weighted category was scored."""
    if any(c not in category_means for c in weights):
        return None
    return sum(w * category_means[c] for c, w in weights.items())


def wise(df: pd.DataFrame, metric: str, value=None) -> dict:
    """Category means over ok rows; the overall only when every prompt id 1-1000 has a score, as upstream
    (which aborts otherwise: a missing image or a failed judge answer leaves the id out of its scores file).
    `printed` is what the upstream script prints: categories and the overall (from the unrounded category
    means) with two decimals. `value(details, score)`: the number upstream averages for a row (default: its
    score)."""
    weights = WISE_WEIGHTS[metric]
    ok, coverage = _rows(df, metric)
    if value is not None:
        ok["score"] = [value(d, score) for d, score in zip(ok["d"], ok["score"])]
    out = {}
    for model, g in ok.groupby("model"):
        cats = _means_by(g, "category")
        missing = sorted(set(WISE_IDS) - {int(p) for p in g["prompt_id"] if str(p).isdigit()})
        overall = weighted_overall(cats, weights) if not missing else None
        out[model] = {"categories": cats, "overall": overall, "coverage": coverage.get(model),
                      "missing_ids": len(missing),
                      "overall_rule": ("upstream: every prompt id 1-1000 must have a score, else no overall "
                                       f"({len(missing)} missing)"),
                      "printed": {"categories": {c.upper(): f"{v:.2f}" for c, v in cats.items()},
                                  "overall": f"{overall:.2f}" if overall is not None else None},
                      "vistar_overall_partial": weighted_overall(cats, weights),
                      "vistar_overall_partial_rule": VISTAR_PARTIAL + " (needs every category, not every id)"}
    return out


# --- GenExam: cal_score.py ---------------------------------------------------------------------------------------

def genexam(df: pd.DataFrame, items=None) -> dict:
    """`pooled`: the mean over all scored exams, what cal_score.py prints as its Average (and, since the public
    annotations carry no `subject` field, its only group); `subject_averaged`: the unweighted mean of the
    per-subject means (subject = id prefix), which cal_score.py does not compute. Exams without a result are
    left out of both, as cal_score.py averages the result files it finds; `missing` counts them."""
    out: dict = defaultdict(dict)
    for metric in ("genexam.strict", "genexam.relaxed"):
        ok, coverage = _rows(df, metric)
        for model, g in ok.groupby("model"):
            subjects = _means_by(g, "subject")
            pooled = float(g["score"].mean())
            out[model][metric] = {"overall": pooled, "pooled": pooled, "printed": f"{round(pooled * 100, 1)}%",
                                  "subjects": subjects, "subject_averaged": sum(subjects.values()) / len(subjects),
                                  "subject_averaged_rule": "vistar: unweighted mean of the subject means (not in cal_score.py)",
                                  "missing": _missing(g, items), "coverage": coverage.get(model)}
    return dict(out)


# --- UniEval: uni_eval.py statistics() ---------------------------------------------------------------------------

def unieval(df: pd.DataFrame, items=None) -> dict:
    """As uni_eval.py's `statistics`: accuracy per L2 tag, L1 = mean of its L2 accuracies, L0 = mean of its L1;
    every tag score rounded to 3 decimals, and UniScore = the 3-decimal mean of the *rounded* L1 scores. A
    missing image or a failed judge answer is an invalid, wrong answer (upstream's empty reply): with `items`,
    every question of every benchmark prompt counts on `samples` images, the most any prompt of the model
    has. `vistar_observed` gives the earlier choice: only the answers that exist, unrounded."""
    ok, coverage = _rows(df, "uniscore")
    sub = df[df.metric == "uniscore"]
    out = {}
    for model in sorted(set(sub["model"])):
        g = ok[ok.model == model]
        answers = [(str(pid), a) for pid, d in zip(g["prompt_id"], g["d"]) for a in d.get("answers", [])]
        observed = _uni_stats(answers, digits=None)
        filled, missing = _with_missing(answers, sub[sub.model == model], items)
        stats = _uni_stats(filled)
        out[model] = {**stats, "missing_answers": missing, "coverage": coverage.get(model),
                      "missing_rule": "upstream: a missing image or failed judge answer counts as a wrong (invalid) answer",
                      "vistar_observed": {k: observed[k] for k in ("uniscore", "case_score", "l1")},
                      "vistar_observed_rule": VISTAR_PARTIAL + " (unrounded)"}
    return out


def _with_missing(answers: list, rows: pd.DataFrame, items) -> tuple[list, int]:
    """The answers plus one invalid answer per question the model's images did not answer."""
    if items is None:
        return answers, 0
    samples = max(rows.groupby("prompt_id").size().max() if len(rows) else 1, 1)
    have: dict[tuple, int] = defaultdict(int)
    for pid, a in answers:
        have[(pid, str(a["qa"]))] += 1
    filled, missing = list(answers), 0
    for item in items:
        for qa in item.qas:
            for _ in range(samples - have.get((str(item.id), str(qa.id)), 0)):
                filled.append((str(item.id), {"qa": qa.id, "tags": list(qa.tags), "got": None, "correct": False}))
                missing += 1
    return filled, missing


def _uni_stats(answers: list[tuple[str, dict]], digits: int | None = 3) -> dict:
    """uni_eval.py's numbers from (prompt id, answer) pairs, rounded as it prints them (`digits=None`: unrounded)."""
    def r(x):
        return round(x, digits) if digits is not None else x

    l2: dict[tuple, list[bool]] = defaultdict(list)
    letters: dict[str, int] = defaultdict(int)
    per_prompt: dict[str, list[bool]] = defaultdict(list)
    for pid, a in answers:
        l2[tuple(a["tags"])].append(bool(a["correct"]))
        letters[a["got"] if a["got"] in tuple("ABCDE") else "invalid"] += 1
        per_prompt[pid].append(bool(a["correct"]))
    l2_acc = {t: sum(v) / len(v) for t, v in l2.items()}
    l1_acc = _roll_up(l2_acc)
    l0_acc = _roll_up(l1_acc)
    l1_printed = {t: r(a) for t, a in l1_acc.items()}
    cases = [v for v in per_prompt.values() if v]
    total = sum(letters.values())
    return {"uniscore": r(sum(l1_printed.values()) / len(l1_printed)) if l1_printed else None,
            "l0": {t0: r(acc) for (t0,), acc in l0_acc.items()},
            "l1": {" / ".join(t): a for t, a in l1_printed.items()},
            "l2": {" / ".join(t): r(a) for t, a in l2_acc.items()},
            "case_score": r(sum(sum(v) / len(v) for v in cases) / len(cases)) if cases else None,
            "prompts_all_right": r(sum(all(v) for v in cases) / len(cases)) if cases else None,
            "options": {k: r(v / total) for k, v in sorted(letters.items())} if total else {},
            "invalid_rate": r(letters.get("invalid", 0) / total) if total else None}


def _roll_up(accuracy: dict[tuple, float]) -> dict[tuple, float]:
    """One tag level up: each parent's accuracy is the plain mean of its children's, so a tag with many
    questions weighs no more than a sibling with few."""
    children: dict[tuple, list[float]] = defaultdict(list)
    for tags, acc in accuracy.items():
        children[tags[:-1]].append(acc)
    return {tags: sum(v) / len(v) for tags, v in children.items()}


# --- PhyBench: no aggregation code is published --------------------------------------------------------------

def phybench(df: pd.DataFrame, items=None) -> dict:
    """Per category of the paper's tables (mechanics, optics, thermodynamics, and material properties split into
    chemistry and physics): mean of phy/3 and of scene/2 over images, and the raw 0-3 / 0-2 means. The
    upstream repository publishes no aggregation (GPT_make_eval.py only stores the replies, and records
    'no image' for an item without one), so items without a score are left out and counted in `missing`;
    the overall, an unweighted mean over the categories present, is vistar's."""
    out: dict = defaultdict(dict)
    scale = {"phybench.phy": 3, "phybench.scene": 2}
    for metric in ("phybench.phy", "phybench.scene"):
        ok, coverage = _rows(df, metric)
        for model, g in ok.groupby("model"):
            cats = _means_by(g, "category")
            out[model][metric] = {"categories": cats, "raw_categories": {c: v * scale[metric] for c, v in cats.items()},
                                  "overall": sum(cats.values()) / len(cats), "overall_rule": "vistar: mean over categories",
                                  "missing": _missing(g, items), "coverage": coverage.get(model)}
    return dict(out)


def summarize(protocol: str, df: pd.DataFrame, items=None) -> dict:
    """The benchmark-level numbers of a run, by the protocol's declared aggregation."""
    from ...engine import registry

    return registry.protocol(protocol).aggregate(df, items)
