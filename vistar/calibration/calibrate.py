"""`calibrate(run_dir, pairs_csv)`: how well each metric in a run agrees with human pairwise preferences.

Per metric: PPA, tie-calibrated acc23 (with its ε), Kendall τ-b, each with a seeded bootstrap CI that
resamples image pairs (all votes on a pair together); McNemar between every two metrics on the judgments
both can score; Krippendorff's α between raters; Bradley–Terry model strengths from human votes next to
those implied by each metric; optionally `fit` of tunable parameters (see `fit.py`). Each judgment (one
CSV row) counts once; a judgment no metric can use counts nowhere.
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
from ..engine.store import ResultStore, read_scores
from ..ontology import Ontology
from . import fit as fitting
from .agreement import acc23, bootstrap_ci, kendall_tau_b, mcnemar, ppa, units_of
from .bradley_terry import fit_bradley_terry, win_matrix
from .krippendorff import krippendorff_alpha
from .pairs import attach_images, read_pairs
from .rescore import rescorable

DEDUPE = ("error", "latest")
LISTED = 5  # problems named in a refusal before "and N more"


class NothingUsable(ValueError):
    """No judgment of the pairs file could be used; the message gives the reasons."""


class DuplicateScores(ValueError):
    """Several `ok` rows for one (image, metric): which one a judgment compares would be arbitrary."""


@dataclass
class CalibrationResult:
    metrics: pd.DataFrame                    # one row per metric: n, PPA, acc23, ε, τ-b and CIs
    mcnemar: pd.DataFrame                    # metric_a, metric_b, n, b, c, statistic, p_chi2, p_exact
    bradley_terry: pd.DataFrame              # model, human, <metric>..., rank columns
    agreement: dict                          # Krippendorff's α (nominal, ordinal), raters, units
    n_judgments: int                         # judgments used (at least one metric scored both images)
    problems: list[str] = field(default_factory=list)   # pairs-file lines left out, with the reason
    warnings: list[str] = field(default_factory=list)   # results to read with care (no CI, unconverged BT, ...)
    fits: list[fitting.FitResult] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    weights_yaml: str | None = None


def ok_scores(scores: pd.DataFrame, dedupe: str = "error") -> pd.DataFrame:
    """The finite `ok` rows, one per (image, metric). Several are an error naming them, unless `dedupe` is
    "latest": then the row of the newest shard is kept (rows written in the same shard cannot be ordered)."""
    if dedupe not in DEDUPE:
        raise ValueError(f"dedupe must be one of {', '.join(DEDUPE)}, not '{dedupe}'")
    ok = scores[(scores["status"] == "ok") & np.isfinite(scores["score"].astype(float))]
    dup = ok.duplicated(["image", "metric"], keep=False)
    if dup.any() and dedupe == "latest":
        newest = ok.groupby(["image", "metric"])["shard"].transform("max")
        ok = ok[ok["shard"] == newest]
        dup = ok.duplicated(["image", "metric"], keep=False)
        if dup.any():
            raise DuplicateScores("--dedupe latest cannot order rows written in the same shard: " + _duplicates(ok[dup]))
    elif dup.any():
        raise DuplicateScores(_duplicates(ok[dup]) + "; which one a judgment compares would be arbitrary. Score each "
                              "image once per metric, or pass --dedupe latest to keep the newest row")
    return ok[["image", "model", "role", "angle", "metric", "score", "details", "shard"]]


def _duplicates(rows: pd.DataFrame) -> str:
    groups = list(rows.groupby(["image", "metric"], sort=True))
    said = [f"{image} {metric} ({', '.join(f'model {r.model} prompt {r.prompt_id} sample {r.sample}' for r in g.itertuples())})"
            for (image, metric), g in groups[:LISTED]]
    more = f" and {len(groups) - LISTED} more" if len(groups) > LISTED else ""
    return f"{len(groups)} (image, metric) with several ok rows: {'; '.join(said)}{more}"


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


STATS = {"ppa": ppa, "acc23": lambda h, d: acc23(h, d)[0], "tau_b": kendall_tau_b}


def metric_table(pairs: pd.DataFrame, ok: pd.DataFrame, seed: int, resamples: int,
                 warnings: list[str] | None = None) -> tuple[pd.DataFrame, dict]:
    rows, per_metric = [], {}
    for metric in sorted(ok["metric"].unique()):
        mp = metric_pairs(pairs, ok, metric)
        if mp.empty:
            continue
        per_metric[metric] = mp
        h, d = mp["h"].to_numpy(), (mp["s_a"] - mp["s_b"]).to_numpy()
        units = units_of(mp["image_a"], mp["image_b"])
        acc, eps = acc23(h, d)
        row = {"metric": metric, "judgments": len(mp), "image_pairs": int(units.max()) + 1,
               "non_tie": int((h != 0).sum()), "human_ties": int((h == 0).sum()),
               "ppa": ppa(h, d), "acc23": acc, "epsilon": eps, "tau_b": kendall_tau_b(h, d)}
        notes = {}
        for name, stat in STATS.items():
            ci = bootstrap_ci(stat, (h, d), seed, resamples, units=units)
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = ci.low, ci.high
            if ci.note:
                notes.setdefault(ci.note, []).append(name)
        rows.append(row)
        if warnings is not None:
            warnings += [f"metric {metric}: no {'/'.join(names)} interval: {note}" for note, names in notes.items()]
    return pd.DataFrame(rows), per_metric


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
    """Krippendorff's α over units (unordered image pair, angle, role): one question a rater answered, so votes
    on two angles of one pair are two units. Each label is oriented to the pair's sorted order."""
    raters = pairs["rater"].dropna().unique() if "rater" in pairs else []
    if len(raters) < 2:
        return {"raters": int(len(raters)), "note": "fewer than two raters: no inter-rater agreement"}
    by_unit: dict[tuple, dict] = {}
    repeated = 0
    for rec in pairs.dropna(subset=["rater"]).itertuples():
        images = tuple(sorted((rec.image_a, rec.image_b)))
        unit = (images, _key(getattr(rec, "angle", None)), _key(getattr(rec, "role", None)))
        value = rec.h if images[0] == rec.image_a else -rec.h
        votes = by_unit.setdefault(unit, {})
        repeated += rec.rater in votes
        votes[rec.rater] = value  # a rater's last vote on a unit counts
    units = [list(v.values()) for v in by_unit.values()]
    rated = sum(1 for u in units if len(u) >= 2)
    out = {"raters": int(len(raters)), "units": len(units), "units_with_2plus_raters": rated,
           "alpha_nominal": krippendorff_alpha(units, "nominal"), "alpha_ordinal": krippendorff_alpha(units, "ordinal")}
    if repeated:
        out["note"] = f"{repeated} repeated vote(s) of one rater on one unit: the last one counts"
    return out


def _key(value) -> str | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def bt_table(pairs: pd.DataFrame, per_metric: dict[str, pd.DataFrame], prior: float = 0.1,
             warnings: list[str] | None = None) -> pd.DataFrame:
    """Bradley–Terry log-strengths (mean 0) per model from human votes, and from each metric over only the
    models it scored (the others are blank, not the prior's value)."""
    cross = pairs[pairs["model_a"] != pairs["model_b"]]
    models = sorted(set(cross["model_a"]) | set(cross["model_b"]))
    if len(models) < 2:
        return pd.DataFrame()
    human = [(a, b, (h + 1) / 2) for a, b, h in zip(cross["model_a"], cross["model_b"], cross["h"])]
    frame = pd.DataFrame({"model": models, "human": _log_strengths("human votes", models, human, prior, warnings)})
    for metric, mp in per_metric.items():
        mp = mp[mp["model_a"] != mp["model_b"]]
        scored = sorted(set(mp["model_a"]) | set(mp["model_b"]))
        if len(scored) < 2:
            continue
        outcomes = [(a, b, 1.0 if d > 0 else 0.0 if d < 0 else 0.5) for a, b, d in zip(mp["model_a"], mp["model_b"], mp["s_a"] - mp["s_b"])]
        strengths = dict(zip(scored, _log_strengths(f"metric {metric}", scored, outcomes, prior, warnings)))
        frame[metric] = frame["model"].map(strengths).astype(float)
    for col in [c for c in frame.columns if c != "model"]:
        frame[f"rank_{col}"] = frame[col].rank(ascending=False, method="min").astype("Int64")
    return frame.sort_values(["rank_human", "model"]).reset_index(drop=True)


def _log_strengths(source: str, models: list[str], outcomes: list, prior: float, warnings: list[str] | None) -> np.ndarray:
    fit = fit_bradley_terry(win_matrix(models, outcomes), prior, names=models)
    if warnings is not None:
        warnings += [f"Bradley–Terry from {source}: {w}" for w in fit.warnings]
    return np.log(fit.strengths)


def _canonical(column: pd.Series, names) -> pd.Series:
    """Names matched ignoring case (`tr` is the run's `TR`); unknown names are kept as written."""
    by_fold = {str(n).casefold(): n for n in names if isinstance(n, str)}
    return column.map(lambda v: by_fold.get(v.casefold(), v) if isinstance(v, str) else None).astype(object)


def _line_of(problem: str, source: str) -> int:
    """The line a `SOURCE:LINE: reason` problem names, so problems read in file order."""
    head = problem[len(source) + 1:].split(":", 1)[0] if problem.startswith(source + ":") else ""
    return int(head) if head.isdigit() else 0


def used_judgments(pairs: pd.DataFrame, per_metric: dict[str, pd.DataFrame], parsed, run_angles: set[str]) -> pd.DataFrame:
    """The judgments at least one metric scored; each other line becomes a problem with its reason (in file
    order). None at all: `NothingUsable`, with the reasons."""
    used = set().union(*(set(mp["line"]) for mp in per_metric.values()))
    for rec in pairs[~pairs["line"].isin(used)].itertuples():  # e.g. an image whose rows are errors
        if isinstance(rec.angle, str) and rec.angle not in run_angles:
            parsed.problems.append(f"{parsed.source}:{rec.line}: angle '{rec.angle}' is not an angle of this run "
                                   f"({', '.join(sorted(run_angles))}); not used")
            continue
        angle = f" on angle {rec.angle}" if isinstance(rec.angle, str) else ""
        parsed.problems.append(f"{parsed.source}:{rec.line}: no metric has an ok score for both images{angle}; not used")
    parsed.problems.sort(key=lambda msg: _line_of(msg, parsed.source))
    if not used:
        reasons = parsed.problems or ["no lines after the header"]
        more = f" (and {len(reasons) - LISTED} more)" if len(reasons) > LISTED else ""
        raise NothingUsable(f"{parsed.source}: no usable judgment, nothing to calibrate: {'; '.join(reasons[:LISTED])}{more}")
    return pairs[pairs["line"].isin(used)].reset_index(drop=True)


def calibrate(run_dir: str | Path, pairs_csv: str | Path, ontology: Ontology | None = None, fit: bool = False,
              seed: int = 0, resamples: int = 1000, trials: int = fitting.DEFAULT_TRIALS,
              test_fraction: float = fitting.DEFAULT_TEST_FRACTION, min_pairs: int = fitting.DEFAULT_MIN_PAIRS,
              dedupe: str = "error") -> CalibrationResult:
    ontology = ontology or Ontology.load()
    warnings = [f"{run_dir}: ignored {p.name} in the scores folder: not a shard vistar wrote"
                for p in ResultStore(run_dir, writable=False).foreign_files()]
    scores = read_scores(run_dir)
    if scores.empty:
        raise ValueError(f"{run_dir}: the run has no scores")
    ok = ok_scores(scores, dedupe)
    parsed = read_pairs(pairs_csv)
    newest_last = ok.sort_values(["shard", "metric"], kind="stable")
    model_of = dict(zip(newest_last["image"], newest_last["model"]))  # an image's model as its newest row says
    pairs = attach_images(parsed, scores, run_dir, model_of) if len(parsed.frame) else parsed.frame
    if len(pairs):
        pairs["angle"] = _canonical(pairs["angle"], scores["angle"].unique())
        pairs["role"] = _canonical(pairs["role"], ontology.roles)
    table, per_metric = metric_table(pairs, ok, seed, resamples, warnings)
    pairs = used_judgments(pairs, per_metric, parsed, set(scores["angle"].dropna()))
    result = CalibrationResult(metrics=table, mcnemar=mcnemar_table(per_metric),
                               bradley_terry=bt_table(pairs, per_metric, warnings=warnings),
                               agreement=rater_agreement(pairs), n_judgments=len(pairs), problems=parsed.problems,
                               warnings=warnings)
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
    summary = {"judgments": result.n_judgments, "warnings": result.warnings, "metrics": json.loads(result.metrics.to_json(orient="records")),
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

