"""`calibrate(run_dir, pairs_csv)`: how well each metric in a run agrees with human pairwise preferences.

Per metric: PPA, tie-calibrated acc23 (with its ε), Kendall τ-b, each with a seeded bootstrap CI over
judgments; McNemar between every two metrics on the judgments both can score; Krippendorff's α between
raters; Bradley–Terry model strengths from human votes next to those implied by each metric; optionally
`fit` of tunable parameters (see `fit.py`). Each judgment (one CSV row) counts once.
"""
from __future__ import annotations

import itertools
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..atomic import write_text_atomic
from ..engine.store import read_scores
from ..ontology import Ontology
from . import fit as fitting
from .agreement import acc23, bootstrap_ci, kendall_tau_b, mcnemar, ppa
from .bradley_terry import bradley_terry, win_matrix
from .krippendorff import krippendorff_alpha
from .pairs import attach_images, read_pairs
from .rescore import rescorable


@dataclass
class CalibrationResult:
    metrics: pd.DataFrame                    # one row per metric: n, PPA, acc23, ε, τ-b and CIs
    mcnemar: pd.DataFrame                    # metric_a, metric_b, n, b, c, statistic, p_chi2, p_exact
    bradley_terry: pd.DataFrame              # model, human, <metric>..., rank columns
    agreement: dict                          # Krippendorff's α (nominal, ordinal), raters, units
    n_judgments: int
    problems: list[str] = field(default_factory=list)
    fits: list[fitting.FitResult] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    weights_yaml: str | None = None


def ok_scores(scores: pd.DataFrame) -> pd.DataFrame:
    ok = scores[(scores["status"] == "ok") & np.isfinite(scores["score"].astype(float))]
    return ok[["image", "model", "role", "angle", "metric", "score", "details"]]


def metric_pairs(pairs: pd.DataFrame, ok: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The judgments `metric` can score (both images scored; the judgment's angle, if given, is the metric's)."""
    sub = ok[ok["metric"] == metric]
    score = dict(zip(sub["image"], sub["score"].astype(float)))
    angle = dict(zip(sub["image"], sub["angle"]))
    keep = pairs["image_a"].isin(score) & pairs["image_b"].isin(score)
    if "angle" in pairs:
        keep &= pairs["angle"].isna() | (pairs["angle"] == pairs["image_a"].map(angle))
    out = pairs[keep].copy()
    out["s_a"] = out["image_a"].map(score)
    out["s_b"] = out["image_b"].map(score)
    return out


def metric_table(pairs: pd.DataFrame, ok: pd.DataFrame, seed: int, resamples: int) -> tuple[pd.DataFrame, dict]:
    rows, per_metric = [], {}
    for metric in sorted(ok["metric"].unique()):
        mp = metric_pairs(pairs, ok, metric)
        if mp.empty:
            continue
        per_metric[metric] = mp
        h, d = mp["h"].to_numpy(), (mp["s_a"] - mp["s_b"]).to_numpy()
        acc, eps = acc23(h, d)
        rows.append({"metric": metric, "judgments": len(mp), "non_tie": int((h != 0).sum()), "human_ties": int((h == 0).sum()),
                     "ppa": ppa(h, d), **_ci("ppa", bootstrap_ci(ppa, (h, d), seed, resamples)),
                     "acc23": acc, "epsilon": eps, **_ci("acc23", bootstrap_ci(lambda a, b: acc23(a, b)[0], (h, d), seed, resamples)),
                     "tau_b": kendall_tau_b(h, d), **_ci("tau_b", bootstrap_ci(kendall_tau_b, (h, d), seed, resamples))})
    return pd.DataFrame(rows), per_metric


def _ci(name, bounds):
    return {f"{name}_ci_low": bounds[0], f"{name}_ci_high": bounds[1]}


def mcnemar_table(per_metric: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    for m1, m2 in itertools.combinations(sorted(per_metric), 2):
        a, b = per_metric[m1], per_metric[m2]
        common = a.index.intersection(b.index)
        common = common[a.loc[common, "h"].to_numpy() != 0]
        if len(common) == 0:
            continue
        h = a.loc[common, "h"].to_numpy()
        ca = h * (a.loc[common, "s_a"] - a.loc[common, "s_b"]).to_numpy() > 0
        cb = h * (b.loc[common, "s_a"] - b.loc[common, "s_b"]).to_numpy() > 0
        rows.append({"metric_a": m1, "metric_b": m2, **asdict(mcnemar(ca, cb))})
    return pd.DataFrame(rows, columns=["metric_a", "metric_b", "n", "b", "c", "statistic", "p_chi2", "p_exact"])


def rater_agreement(pairs: pd.DataFrame) -> dict:
    """Krippendorff's α over unordered image pairs, each rater's label oriented to the pair's sorted order."""
    raters = pairs["rater"].dropna().unique() if "rater" in pairs else []
    if len(raters) < 2:
        return {"raters": int(len(raters)), "note": "fewer than two raters: no inter-rater agreement"}
    by_unit: dict[tuple, dict] = {}
    for rec in pairs.dropna(subset=["rater"]).itertuples():
        unit = tuple(sorted((rec.image_a, rec.image_b)))
        value = rec.h if unit[0] == rec.image_a else -rec.h
        by_unit.setdefault(unit, {})[rec.rater] = value  # a rater's last vote on a pair counts
    units = [list(v.values()) for v in by_unit.values()]
    rated = sum(1 for u in units if len(u) >= 2)
    return {"raters": int(len(raters)), "units": len(units), "units_with_2plus_raters": rated,
            "alpha_nominal": krippendorff_alpha(units, "nominal"), "alpha_ordinal": krippendorff_alpha(units, "ordinal")}


def bt_table(pairs: pd.DataFrame, per_metric: dict[str, pd.DataFrame], prior: float = 0.1) -> pd.DataFrame:
    """Bradley–Terry strengths per model (log scale, mean 0) from human votes and from each metric's scores."""
    cross = pairs[pairs["model_a"] != pairs["model_b"]]
    models = sorted(set(cross["model_a"]) | set(cross["model_b"]))
    if len(models) < 2:
        return pd.DataFrame()
    human = [(a, b, (h + 1) / 2) for a, b, h in zip(cross["model_a"], cross["model_b"], cross["h"])]
    frame = pd.DataFrame({"model": models, "human": np.log(bradley_terry(win_matrix(models, human), prior))})
    for metric, mp in per_metric.items():
        mp = mp[mp["model_a"] != mp["model_b"]]
        if mp.empty:
            continue
        outcomes = [(a, b, 1.0 if d > 0 else 0.0 if d < 0 else 0.5) for a, b, d in zip(mp["model_a"], mp["model_b"], mp["s_a"] - mp["s_b"])]
        frame[metric] = np.log(bradley_terry(win_matrix(models, outcomes), prior))
    for col in [c for c in frame.columns if c != "model"]:
        frame[f"rank_{col}"] = frame[col].rank(ascending=False, method="min").astype(int)
    return frame.sort_values(["rank_human", "model"]).reset_index(drop=True)


def calibrate(run_dir: str | Path, pairs_csv: str | Path, ontology: Ontology | None = None, fit: bool = False,
              seed: int = 0, resamples: int = 1000, trials: int = fitting.DEFAULT_TRIALS,
              test_fraction: float = fitting.DEFAULT_TEST_FRACTION, min_pairs: int = fitting.DEFAULT_MIN_PAIRS) -> CalibrationResult:
    ontology = ontology or Ontology.load()
    scores = read_scores(run_dir)
    if scores.empty:
        raise ValueError(f"{run_dir}: the run has no scores")
    parsed = read_pairs(pairs_csv)
    pairs = attach_images(parsed, scores, run_dir) if len(parsed.frame) else parsed.frame
    if pairs.empty:
        raise ValueError(f"{pairs_csv}: no usable judgment (problems: {'; '.join(parsed.problems[:5]) or 'no lines after the header'})")
    ok = ok_scores(scores)
    table, per_metric = metric_table(pairs, ok, seed, resamples)
    scored = set().union(*(set(mp["line"]) for mp in per_metric.values()))
    for rec in pairs[~pairs["line"].isin(scored)].itertuples():  # e.g. an image whose rows are errors
        angle = f" on angle {rec.angle}" if rec.angle else ""
        parsed.problems.append(f"{parsed.source}:{rec.line}: no metric has an ok score for both images{angle}; not used")
    result = CalibrationResult(metrics=table, mcnemar=mcnemar_table(per_metric), bradley_terry=bt_table(pairs, per_metric),
                               agreement=rater_agreement(pairs), n_judgments=len(pairs), problems=parsed.problems)
    if fit:
        _fit_all(result, pairs, ok, per_metric, ontology, seed, trials, test_fraction, min_pairs)
    return result


def _fit_all(result, pairs, ok, per_metric, ontology, seed, trials, test_fraction, min_pairs) -> None:
    details = dict(zip(ok["image"] + "\x1f" + ok["metric"], ok["details"]))
    roles = dict(zip(ok["image"], ok["role"]))
    for metric, mp in per_metric.items():
        space = rescorable(metric, ontology.tunable(metric))
        skipped = [p for p in ontology.tunable(metric) if p not in space]
        if skipped:
            result.refusals.append(f"metric {metric}: {', '.join(skipped)} cannot be re-scored from stored details; re-run `vistar score` to vary them")
        if not space:
            continue
        mine = {img: details.get(img + "\x1f" + metric) for img in set(mp["image_a"]) | set(mp["image_b"])}
        current = ontology.metric_params(metric)
        for group, judged in fitting.weight_groups(metric, current, mp, roles).items():
            try:
                result.fits.append(fitting.fit_metric(metric, judged, mine, current, space, seed, trials,
                                                      test_fraction, min_pairs, roles=roles, group=group))
            except fitting.TooFewPairs as exc:
                result.refusals.append(str(exc))
    if "role" in pairs and pairs["role"].notna().any():
        angle_rows = ok[ok["metric"] == ok["angle"]]
        means = angle_rows.groupby(["model", "angle"])["score"].mean().unstack()
        for role in sorted(pairs["role"].dropna().unique()):
            judged = pairs[(pairs["role"] == role) & (pairs["model_a"] != pairs["model_b"])]
            if role not in ontology.roles:
                result.refusals.append(f"role {role}: not a role of the ontology")
                continue
            try:
                result.fits.append(fitting.fit_role(role, judged, means, ontology.role_weights(role), seed, trials,
                                                    test_fraction, min_pairs))
            except fitting.TooFewPairs as exc:
                result.refusals.append(str(exc))
    if result.fits:
        result.weights_yaml = weights_overlay(result.fits)


def weights_overlay(fits: list[fitting.FitResult]) -> str:
    """An ontology overlay YAML (deep-merged by `--weights`) with the fitted values."""
    data: dict = {}
    lines = ["# Written by `vistar calibrate --fit`: pass to `vistar score --weights` / `vistar report --weights`."]
    for f in fits:
        words = f.target.split(" ")
        if words[0] == "role":
            data.setdefault("role_weights", {})[words[1]] = dict(f.params_after)
        else:
            params = data.setdefault("metrics", {}).setdefault(words[1], {}).setdefault("params", {})
            if len(words) == 4:  # "metric CPA role SA": that role's override of the metric's weights
                params.setdefault("role_weights", {})[words[3]] = dict(f.params_after)
            else:
                params.update(f.params_after)
        lines.append(f"# {f.target}: held-out PPA {_pct(f.test_ppa_before)} -> {_pct(f.test_ppa_after)} "
                     f"({f.test_pairs} held-out / {f.train_pairs} train non-tie judgments)")
    return "\n".join(lines) + "\n" + yaml.safe_dump(data, sort_keys=True)


def _pct(v: float) -> str:
    return "n/a" if not math.isfinite(v) else f"{v:.3f}"


def write_outputs(result: CalibrationResult, out_dir: str | Path) -> dict[str, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"metrics": out / "metrics.csv", "mcnemar": out / "mcnemar.csv", "bradley_terry": out / "bradley_terry.csv",
             "json": out / "calibration.json"}
    write_text_atomic(paths["metrics"], result.metrics.to_csv(index=False, float_format="%.6g"))
    write_text_atomic(paths["mcnemar"], result.mcnemar.to_csv(index=False, float_format="%.6g"))
    write_text_atomic(paths["bradley_terry"], result.bradley_terry.to_csv(index=False, float_format="%.6g"))
    summary = {"judgments": result.n_judgments, "metrics": json.loads(result.metrics.to_json(orient="records")),
               "mcnemar": json.loads(result.mcnemar.to_json(orient="records")), "agreement": result.agreement,
               "bradley_terry": json.loads(result.bradley_terry.to_json(orient="records")),
               "fits": [_fit_json(f) for f in result.fits], "refusals": result.refusals, "problems": result.problems}
    write_text_atomic(paths["json"], json.dumps(_clean(summary), indent=2, allow_nan=False))
    if result.weights_yaml:
        paths["weights"] = out / "weights.yaml"
        write_text_atomic(paths["weights"], result.weights_yaml)
    return paths


def _fit_json(f: fitting.FitResult) -> dict:
    return asdict(f)


def _clean(value):
    """Strict JSON: NaN/inf become null, numpy scalars become plain numbers."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value

