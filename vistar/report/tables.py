"""The report's numbers: per model × angle means with CIs and counts, role-weighted scores, Core/Hard/Drop,
rankings, and plain-language notes about what the run does not cover.

Pure functions of the scores DataFrame (`vistar.engine.store.read_scores`) and the ontology; every score
is on 0–100. Decisions (documented in docs/report.md):
- an angle's score is the mean over its images of the metric named like the angle (sub-metrics are not averaged in);
- a model's overall score is the average of its angle scores weighted by each angle's mean role weight
  (`overall_weights`), renormalised over the weighted angles it was scored on: with every angle scored it is the
  mean of the role scores; an angle whose weight is 0 in every role (GC by default) is shown apart, never averaged in;
- a role's score is Σ w_a · angle score over the role's masked angles that were scored, with the weights
  renormalised over those angles; the covered share of the role's weight is reported and partial coverage is flagged;
- Core/Hard use the overall's weights over, per model, only the angles scored in both sets, so Drop compares like with
  like (none in common: no Core/Hard, a note);
- a 95% CI needs MIN_UNITS images in every cell it draws on and some width, as calibration's intervals do.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..engine.store import READ_ORDER
from ..ontology import Ontology
from .bootstrap import DEFAULT_RESAMPLES, MIN_UNITS, bootstrap_means, cell_rng, interval

STATUSES = ("ok", "error", "skipped")
# the order rows are bootstrapped in: the store's read order, the key breaking ties among rows not deduplicated
CANONICAL = (*(column for column, _ in READ_ORDER), "key")


@dataclass
class ReportData:
    angle_scores: pd.DataFrame      # model, angle, name, mean, ci_low, ci_high, n_ok, n_error, n_skipped
    overall: pd.DataFrame           # model, overall, ci_low, ci_high, angles, covered_weight, unweighted, rank, core, hard, drop_pct
    role_scores: pd.DataFrame       # role, role_name, model, score, ci_low, ci_high, rank, covered_weight, angles_used, angles_missing, partial
    distributions: dict             # (model, angle) -> np.ndarray of ok scores (0–100)
    notes: list[str] = field(default_factory=list)
    ranking_notes: list[str] = field(default_factory=list)
    has_sets: bool = False
    skip_reasons: pd.DataFrame | None = None  # angle, status, reason, count
    other_metrics: pd.DataFrame | None = None  # model, angle, metric, mean, n_ok, n_error, n_skipped
    summary: dict = field(default_factory=dict)
    provenance: list[str] = field(default_factory=list)  # what ran where, from run.json (`runmeta.run_provenance`)
    judge_templates: list[str] = field(default_factory=list)  # template family per protocol metric (`templates.py`)


def angle_rows(scores: pd.DataFrame) -> pd.DataFrame:
    """Rows that carry an angle's own score (metric named like the angle), with score on 0–100."""
    rows = scores[scores["metric"] == scores["angle"]].copy()
    rows["score100"] = rows["score"].astype(float) * 100.0
    ok = (rows["status"] == "ok") & np.isfinite(rows["score100"])
    rows.loc[~ok & (rows["status"] == "ok"), "status"] = "error"  # an ok row without a finite score is not a score
    return rows


def canonical_order(scores: pd.DataFrame) -> pd.DataFrame:
    """The rows sorted by their identity: the bootstrap draws indices, so the same rows stored in another order (a
    resumed run, a merge, another batch size) must give the same CIs."""
    by = [c for c in CANONICAL if c in scores.columns]
    return scores.sort_values(by, kind="stable", na_position="last").reset_index(drop=True) if by else scores


def build_report_data(scores: pd.DataFrame, ontology: Ontology, seed: int = 0,
                      resamples: int = DEFAULT_RESAMPLES) -> ReportData:
    scores = canonical_order(scores)
    rows = angle_rows(scores)
    models = sorted(rows["model"].unique())
    angle_order = [a for a in ontology.angles if a in set(rows["angle"])]
    angle_order += sorted(set(rows["angle"]) - set(angle_order))
    boots: dict[tuple[str, str], np.ndarray] = {}   # resampled means, for CIs of derived scores
    points: dict[tuple[str, str], float] = {}
    units: dict[tuple[str, str], int] = {}          # ok images per cell: a CI needs MIN_UNITS of them
    records, dists = [], {}
    cells = dict(iter(rows.groupby(["model", "angle"], sort=False)))  # one pass, not one scan per cell
    for model in models:
        for angle in angle_order:
            cell = cells.get((model, angle))
            if cell is None:
                continue
            counts = cell["status"].value_counts()
            vals = cell.loc[cell["status"] == "ok", "score100"].to_numpy(dtype=float)
            boot = bootstrap_means(vals, cell_rng(seed, model, angle), resamples)
            lo, hi = interval(boot, len(vals))
            if len(vals):
                boots[(model, angle)] = boot
                units[(model, angle)] = len(vals)
                points[(model, angle)] = float(vals.mean())
                dists[(model, angle)] = vals
            records.append({"model": model, "angle": angle, "name": ontology.angles.get(angle, {}).get("name", angle),
                            "mean": float(vals.mean()) if len(vals) else np.nan, "ci_low": lo, "ci_high": hi,
                            **{f"n_{s}": int(counts.get(s, 0)) for s in STATUSES}})
    angle_scores = pd.DataFrame(records, columns=["model", "angle", "name", "mean", "ci_low", "ci_high",
                                                  *(f"n_{s}" for s in STATUSES)])
    weights = overall_weights(ontology)
    data = ReportData(angle_scores=angle_scores, overall=_overall(models, angle_order, boots, points, weights, units),
                      role_scores=_roles(ontology, models, boots, points, units), distributions=dists)
    data.has_sets = bool(rows["set"].isin(["core", "hard"]).any())
    set_notes: list[str] = []
    if data.has_sets:
        core_hard, set_notes = _core_hard(rows, models, weights)
        data.overall = data.overall.merge(core_hard, on="model", how="left")
    data.skip_reasons = _reasons(rows)
    data.other_metrics = other_metrics(scores)
    data.notes = _coverage_notes(rows, scores["metric"].dropna().unique(), ontology, models, angle_order, data, weights) + set_notes
    data.ranking_notes = _ranking_notes(data)
    data.summary = {"models": models, "angles": angle_order, "rows": int(len(scores)), "angle_rows": int(len(rows)),
                    "seed": seed, "resamples": resamples, "ontology_hash": ontology.hash,
                    "overall_weights": {a: weights.get(a, 0.0) for a in angle_order},
                    "unweighted_angles": [a for a in angle_order if weights.get(a, 0.0) <= 0]}
    return data


def overall_weights(ontology: Ontology) -> dict[str, float]:
    """Each angle's weight in the overall score: its role weight averaged over the roles that have a mask (so the
    weights sum to 1, and with every angle scored the overall is the mean of the role scores); 0 for an angle no
    role weighs (GC by default, an angle outside every mask)."""
    roles = [r for r in ontology.roles if ontology.mask.get(r)]
    weights = dict.fromkeys(ontology.angles, 0.0)
    for role in roles:
        for angle, w in ontology.role_weights(role).items():
            weights[angle] += w / len(roles)
    return weights


def weighted_mean(values: dict[str, float], weights: dict[str, float]):
    """Σ w·v / Σ w over the angles of VALUES with a positive weight (NaN when none has one); VALUES' entries may be
    arrays (bootstrap resamples)."""
    used = [a for a in values if weights.get(a, 0.0) > 0]
    total = sum(weights[a] for a in used)
    if not used:
        return np.nan
    return sum(weights[a] / total * values[a] for a in used)


def _overall(models, angle_order, boots, points, weights, units) -> pd.DataFrame:
    records = []
    for model in models:
        scored = [a for a in angle_order if (model, a) in boots]
        angles = [a for a in scored if weights.get(a, 0.0) > 0]
        unweighted = ",".join(a for a in scored if a not in angles)
        if not angles:
            records.append({"model": model, "overall": np.nan, "ci_low": np.nan, "ci_high": np.nan, "angles": "",
                            "covered_weight": 0.0, "unweighted": unweighted})
            continue
        lo, hi = interval(weighted_mean({a: boots[(model, a)] for a in angles}, weights), min(units[(model, a)] for a in angles))
        records.append({"model": model, "overall": float(weighted_mean({a: points[(model, a)] for a in angles}, weights)),
                        "ci_low": lo, "ci_high": hi, "angles": ",".join(angles),
                        "covered_weight": float(sum(weights[a] for a in angles)), "unweighted": unweighted})
    frame = pd.DataFrame(records, columns=["model", "overall", "ci_low", "ci_high", "angles", "covered_weight", "unweighted"])
    frame["rank"] = frame["overall"].rank(ascending=False, method="min").astype("Int64")
    return frame.sort_values(["rank", "model"], na_position="last").reset_index(drop=True)


def _core_hard(rows, models, weights) -> tuple[pd.DataFrame, list[str]]:
    """Core/Hard over the weighted angles a model has in both sets; a model with one set shows that set's score; one
    with both sets but no weighted angle in common gets neither (they would compare different angles), and a note."""
    ok = rows[rows.status == "ok"]
    records, notes = [], []
    for model in models:
        sub = ok[ok.model == model]
        core = sub[sub["set"] == "core"].groupby("angle")["score100"].mean()
        hard = sub[sub["set"] == "hard"].groupby("angle")["score100"].mean()
        both = sorted(a for a in set(core.index) & set(hard.index) if weights.get(a, 0.0) > 0)
        c = float(weighted_mean(core[both].to_dict(), weights))
        h = float(weighted_mean(hard[both].to_dict(), weights))
        if not both and len(core) and len(hard):
            notes.append(f"Model {model}: its core prompts ({', '.join(core.index)}) and hard prompts ({', '.join(hard.index)}) "
                         "share no weighted angle: Core, Hard and Drop are left empty (they would compare different angles).")
        elif not both:  # one set only: still show it, without a drop
            c, h = float(weighted_mean(core.to_dict(), weights)), float(weighted_mean(hard.to_dict(), weights))
        drop = (c - h) / c * 100.0 if both and c > 0 else np.nan
        records.append({"model": model, "core": c, "hard": h, "drop_pct": drop, "set_angles": ",".join(both)})
    return pd.DataFrame(records), notes


def _roles(ontology: Ontology, models, boots, points, units) -> pd.DataFrame:
    records = []
    for role, role_name in ontology.roles.items():
        weights = {a: w for a, w in (ontology.role_weights(role) if ontology.mask.get(role) else {}).items() if w > 0}
        for model in models:
            used = [a for a in weights if (model, a) in boots]
            missing = [a for a in weights if (model, a) not in boots]
            covered = sum(weights[a] for a in used)
            if not used or covered <= 0:
                score, lo, hi = np.nan, np.nan, np.nan
            else:
                score = float(weighted_mean({a: points[(model, a)] for a in used}, weights))
                lo, hi = interval(weighted_mean({a: boots[(model, a)] for a in used}, weights), min(units[(model, a)] for a in used))
            records.append({"role": role, "role_name": role_name, "model": model, "score": score, "ci_low": lo,
                            "ci_high": hi, "covered_weight": covered, "angles_used": ",".join(used),
                            "angles_missing": ",".join(missing), "partial": bool(missing) and bool(used)})
    frame = pd.DataFrame(records, columns=["role", "role_name", "model", "score", "ci_low", "ci_high", "covered_weight",
                                           "angles_used", "angles_missing", "partial"])
    frame["rank"] = frame.groupby("role")["score"].rank(ascending=False, method="min").astype("Int64")
    return frame


def other_metrics(scores: pd.DataFrame) -> pd.DataFrame:
    """Metrics not named like their angle (a second metric of an angle, a protocol's metrics): mean over ok rows
    (0–100) and row counts per model, angle and metric, so every registered metric a run scored has a table."""
    rows = scores[scores["metric"] != scores["angle"]].copy()
    rows["score100"] = rows["score"].astype(float) * 100.0
    records = []
    for (model, angle, metric), g in rows.groupby(["model", "angle", "metric"], sort=True):
        ok = g.loc[(g["status"] == "ok") & np.isfinite(g["score100"]), "score100"]
        records.append({"model": model, "angle": angle, "metric": metric, "mean": float(ok.mean()) if len(ok) else np.nan,
                        "n_ok": int(len(ok)), **{f"n_{s}": int((g["status"] == s).sum()) for s in STATUSES if s != "ok"}})
    return pd.DataFrame(records, columns=["model", "angle", "metric", "mean", "n_ok", "n_error", "n_skipped"])


def _reasons(rows) -> pd.DataFrame:
    bad = rows[rows.status != "ok"].copy()
    bad["reason"] = bad["error"].fillna("").str.split("\n").str[0].str.slice(0, 160)
    return (bad.groupby(["angle", "status", "reason"]).size().rename("count").reset_index()
            .sort_values(["count", "angle"], ascending=[False, True]).reset_index(drop=True))


def _coverage_notes(rows, scores_metrics, ontology, models, angle_order, data, weights) -> list[str]:
    notes = []
    absent = [a for a in ontology.angles if a not in set(rows["angle"])]
    if absent:
        notes.append("Angles not in this run: " + ", ".join(f"{a} ({ontology.angles[a].get('name', a)})" for a in absent) + ".")
    for angle in angle_order:  # an angle whose validity goal is unmet says so next to its scores
        if caveat := (ontology.angles.get(angle) or {}).get("experimental"):
            notes.append(f"{angle} ({ontology.angles[angle].get('name', angle)}) is experimental: {caveat}.")
    no_score = [a for a in angle_order if not (data.angle_scores.loc[data.angle_scores.angle == a, "n_ok"] > 0).any()]
    if no_score:
        notes.append("Angles with rows but no successful score (errors/skips only): " + ", ".join(no_score) + ".")
    scored = [a for a in angle_order if a not in no_score]
    for angle in (a for a in scored if weights.get(a, 0.0) <= 0):
        notes.append(f"{angle} ({(ontology.angles.get(angle) or {}).get('name', angle)}) has weight 0 in every role: its scores "
                     "are shown apart, not averaged into the overall or any role score.")
    if scored and all(weights.get(a, 0.0) <= 0 for a in scored):
        notes.append("No scored angle carries role weight: no overall score and no role score.")
    for model in models:
        have = set(data.angle_scores.loc[(data.angle_scores.model == model) & (data.angle_scores.n_ok > 0), "angle"])
        gaps = [a for a in scored if a not in have]
        weighted = [a for a in gaps if weights.get(a, 0.0) > 0]
        if weighted:
            notes.append(f"Model {model} has no score for {', '.join(weighted)} (other models do): its overall and role "
                         "scores cover fewer angles and are not directly comparable.")
        elif gaps:
            notes.append(f"Model {model} has no score for {', '.join(gaps)} (other models do); {', '.join(gaps)} "
                         f"{'has' if len(gaps) == 1 else 'have'} weight 0 in every role, so its overall and role scores are unaffected.")
    for role in ontology.roles:
        sub = data.role_scores[data.role_scores.role == role]
        if sub["score"].isna().all():
            notes.append(_unscored_role_note(role, ontology, scored))
        else:
            note = _partial_role_note(role_label(role, ontology.roles[role]), sub[sub["score"].notna()])
            if note:
                notes.append(note)
    others = sorted(set(scores_metrics) - set(rows["metric"]))
    if others:
        notes.append("Metrics other than the angle scores (" + ", ".join(others) + ") are not averaged into the tables; "
                     "they have their own table (other metrics) and every row is in report.duckdb, table `scores`.")
    errors = int(data.angle_scores["n_error"].sum())
    skipped = int(data.angle_scores["n_skipped"].sum())
    if errors or skipped:
        notes.append(f"{errors} row(s) ended in error and {skipped} were skipped; they are excluded from means (see counts and reasons).")
    if not data.has_sets:
        notes.append("Prompts carry no set=core|hard: Core, Hard and Drop are not computed.")
    if note := _no_interval_note(data.angle_scores):
        notes.append(note)
    return notes


def _no_interval_note(angle_scores: pd.DataFrame, listed: int = 8) -> str | None:
    """Which scored cells have no 95% CI and why (too few images; every resample equal), as calibration says it."""
    scored = angle_scores[angle_scores["n_ok"] > 0]
    few = scored[scored["n_ok"] < MIN_UNITS]
    flat = scored[(scored["n_ok"] >= MIN_UNITS) & scored["ci_low"].isna()]
    if few.empty and flat.empty:
        return None

    def named(cells: pd.DataFrame, count: bool) -> str:
        said = [f"{m} {a}" + (f" ({n})" if count else "") for m, a, n in zip(cells["model"], cells["angle"], cells["n_ok"])]
        return ", ".join(said[:listed]) + (f" and {len(said) - listed} more" if len(said) > listed else "")

    reasons = ([f"fewer than {MIN_UNITS} scored images in {named(few, True)}"] if len(few) else []) + \
              ([f"every resample gives the same mean in {named(flat, False)}"] if len(flat) else [])
    return ("No 95% CI (shown as —) where a zero-width or small-sample interval would claim a certainty the data "
            f"cannot give: {'; '.join(reasons)}. An overall or role score built on a cell with too few images has none either.")


def _unscored_role_note(role: str, ontology: Ontology, scored: list[str]) -> str:
    """Why a role has no score: none of the angles that carry its weight was scored (an angle of its mask with
    weight 0 may have been, and is named as such)."""
    label = role_label(role, ontology.roles[role])
    mask = ontology.mask.get(role, [])
    if not mask:
        return f"{label}: no angle in its mask; no role score."
    weights = ontology.role_weights(role)
    note = (f"{label}: none of its weighted angles ({', '.join(a for a in mask if weights[a] > 0)}) were scored; "
            "no role score.")
    zero = [a for a in mask if weights[a] <= 0 and a in scored]
    if zero:
        note += f" {', '.join(zero)} {'was' if len(zero) == 1 else 'were'} scored but {'has' if len(zero) == 1 else 'have'} weight 0 in this role."
    return note


def role_label(role: str, name: str) -> str:
    """How every note names a role: code and name, `Role GD (Graphic Designer)`."""
    return f"Role {role} ({name})" if name and name != role else f"Role {role}"


def _partial_role_note(label: str, scored: pd.DataFrame) -> str | None:
    """The role note from the models that have a role score (a model without one, or with fewer angles than
    another, has its own note): none when some model covers all of the role's weight; the share and the angles
    nobody scored when the best-covered models miss exactly those; else each model's share and gaps."""
    best = scored["covered_weight"].max()
    if best >= 1 - 1e-9:
        return None
    gaps = {m: sorted(a for a in miss.split(",") if a) for m, miss in zip(scored["model"], scored["angles_missing"])}
    nobody = sorted(set.intersection(*(set(g) for g in gaps.values())))
    leaders = scored.loc[scored["covered_weight"] >= best - 1e-9, "model"]
    if all(gaps[m] == nobody for m in leaders):
        return f"{label}: partial — scored on {best:.0%} of its weight; missing {', '.join(nobody)}."
    by_share = scored.sort_values(["covered_weight", "model"], ascending=[False, True])
    parts = [f"{m} on {w:.0%} (missing {', '.join(gaps[m])})" for m, w in zip(by_share["model"], by_share["covered_weight"])]
    return f"{label}: partial — no model is scored on all of its weight: {', '.join(parts)}."


def _order(frame: pd.DataFrame, col: str) -> list[str]:
    frame = frame.dropna(subset=[col]).sort_values([col, "model"], ascending=[False, True])
    return list(frame["model"])


def _ranking_notes(data: ReportData) -> list[str]:
    """A note per role that strictly reverses at least one pair of models the overall score orders strictly
    (equal scores never count as a difference, whatever order a sort puts them in)."""
    overall_score = dict(zip(data.overall["model"], data.overall["overall"]))
    overall = _order(data.overall, "overall")
    notes = []
    for role, sub in data.role_scores.groupby("role", sort=False):
        order = _order(sub, "score")
        if len(order) < 2:
            continue
        role_score = dict(zip(sub["model"], sub["score"]))
        common = [m for m in overall if m in order]
        reversed_pair = any((role_score[a] - role_score[b]) * (overall_score[a] - overall_score[b]) < 0
                            for i, a in enumerate(common) for b in common[i + 1:])
        if reversed_pair:
            top = order[0]
            label = role_label(role, sub["role_name"].iloc[0])
            msg = f"{label}: ranking differs from overall ({' > '.join(order)} vs overall {' > '.join(common)})"
            if top != common[0] and role_score[top] > role_score[common[0]]:
                msg += f"; best for {role} is {top}, not the overall leader {common[0]}"
            notes.append(msg + ".")
    return notes
