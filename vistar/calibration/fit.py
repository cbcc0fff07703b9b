"""`--fit`: Bayesian optimisation (optuna TPE, seeded, single-threaded) of tunable parameters for PPA.

Two kinds of parameters are fitted:
- metric parameters that the ontology marks tunable and a re-scorer can recompute from stored details
  (TR's w_char, CPA's w_c/w_p/w_e), on image-level pairs judged for that metric's angle;
- role weights, on judgments that name a `role` between images of different models: the role-weighted
  model score S_R(model) = Σ w_a · mean angle score should rank the preferred model's image higher.

Judgments are split into train and held-out parts by unordered image pair (all votes on one pair fall on
the same side), so the held-out PPA is an honest estimate. Fitting refuses when the train part has fewer
than `min_pairs` non-tie judgments.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..engine import registry
from .agreement import McNemar, mcnemar, ppa
from .rescore import RESCORERS, normalise_weights

DEFAULT_MIN_PAIRS = 50
DEFAULT_TRIALS = 60
DEFAULT_TEST_FRACTION = 0.3


class TooFewPairs(ValueError):
    pass


@dataclass
class FitResult:
    target: str                  # "metric TR" or "role GD"
    params_before: dict
    params_after: dict
    train_pairs: int
    test_pairs: int
    train_ppa_before: float
    train_ppa_after: float
    test_ppa_before: float
    test_ppa_after: float
    test_mcnemar: McNemar | None = None
    trials: int = 0
    notes: list[str] = field(default_factory=list)


def split_pairs(frame: pd.DataFrame, test_fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of held-out rows; all judgments of one unordered image pair land on the same side."""
    units = [tuple(sorted(p)) for p in zip(frame["image_a"], frame["image_b"])]
    unique = sorted(set(units))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(unique))
    n_test = int(math.ceil(test_fraction * len(unique))) if test_fraction > 0 else 0
    test_units = {unique[i] for i in order[:n_test]}
    return np.array([u in test_units for u in units], dtype=bool)


def _optimise(objective, space: list[str], start: dict, trials: int, seed: int) -> tuple[dict, int]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    study.enqueue_trial({k: float(start[k]) for k in space})  # the current setting competes too
    study.optimize(lambda t: objective({k: t.suggest_float(k, 0.0, 1.0) for k in space}), n_trials=trials, n_jobs=1)
    return dict(study.best_params), len(study.trials)


def _check_size(target: str, h_train: np.ndarray, min_pairs: int, left_out: str | None = None) -> None:
    n = int((h_train != 0).sum())
    if n < min_pairs:
        raise TooFewPairs(f"{target}: only {n} non-tie training judgment(s), need at least {min_pairs} to fit "
                          f"(add pairs, or lower --min-pairs knowingly; small sets overfit)" + (f"; {left_out}" if left_out else ""))


def _lacking(metric: str, subscores: tuple[str, ...]) -> str:
    """Why a judgment cannot be re-scored: its rows store none of the sub-scores the metric's formula combines."""
    return (f"the rows' details carry none of {', '.join(subscores)}, the sub-scores metric {metric} (version "
            f"{registry.metric(metric).version}) re-scores from; rows written by another version or by hand may not store them")


def fit_metric(metric: str, pairs: pd.DataFrame, details: dict[str, str], current: dict, space: list[str],
               seed: int = 0, trials: int = DEFAULT_TRIALS, test_fraction: float = DEFAULT_TEST_FRACTION,
               min_pairs: int = DEFAULT_MIN_PAIRS, roles: dict[str, str] | None = None,
               group: str | None = None) -> FitResult:
    """Fit `space` ⊆ the re-scorer's params on `pairs` (columns image_a, image_b, h) using `details[image]`
    (and `roles[image]`, the prompt role, for metrics with per-role parameter overrides).

    `group`: None fits the metric's default parameters; a role name fits that role's override in
    `params.role_weights[group]` instead (the caller passes only judgments whose images use that group)."""
    rescorer = RESCORERS[metric]
    sub_a = np.stack([rescorer.extract(details.get(i)) for i in pairs["image_a"]]) if len(pairs) else np.zeros((0, len(rescorer.subscores)))
    sub_b = np.stack([rescorer.extract(details.get(i)) for i in pairs["image_b"]]) if len(pairs) else sub_a
    usable = np.isfinite(sub_a).any(axis=1) & np.isfinite(sub_b).any(axis=1)
    target = f"metric {metric}" + (f" role {group}" if group else "")
    dropped = int((~usable).sum())
    if dropped and dropped == len(usable):
        raise TooFewPairs(f"{target}: none of the {dropped} judgment(s) can be re-scored: "
                          f"{_lacking(metric, rescorer.subscores)}. Re-run `vistar score` to refit.")
    left_out = f"{dropped} of the {len(usable)} judgment(s) left out: {_lacking(metric, rescorer.subscores)}" if dropped else None
    pairs, sub_a, sub_b = pairs[usable].reset_index(drop=True), sub_a[usable], sub_b[usable]
    roles = roles or {}
    role_a = np.asarray([roles.get(i) for i in pairs["image_a"]], dtype=object)
    role_b = np.asarray([roles.get(i) for i in pairs["image_b"]], dtype=object)
    h = pairs["h"].to_numpy()
    test = split_pairs(pairs, test_fraction, seed)
    _check_size(target, h[~test], min_pairs, left_out)
    start = {**current, **(((current.get("role_weights") or {}).get(group) or {}) if group else {})}

    def full(candidate: dict) -> dict:
        if group is None:
            return {**current, **candidate}
        overrides = dict(current.get("role_weights") or {})
        overrides[group] = {**(overrides.get(group) or {}), **candidate}
        return {**current, "role_weights": overrides}

    def delta(candidate, rows):
        params = full(candidate)
        diff = rescorer.combine(sub_a[rows], params, role_a[rows]) - rescorer.combine(sub_b[rows], params, role_b[rows])
        return np.nan_to_num(diff, nan=0.0)

    best, n_trials = _optimise(lambda p: ppa(h[~test], delta(p, ~test)), space, start, trials, seed)
    before = {k: float(start[k]) for k in space}
    after = normalise_weights(metric, {**start, **best})
    after = {k: round(float(after[k]), 4) for k in space}
    result = _result(target, before, after, h, test, delta, n_trials)
    if left_out:
        result.notes.append(left_out)
    return result


def weight_groups(metric: str, current: dict, pairs: pd.DataFrame, roles: dict[str, str]) -> dict[str | None, pd.DataFrame]:
    """Judgments per parameter group: None (default parameters) and each role with its own override.
    A judgment between images of different groups constrains neither alone and is left out."""
    if not RESCORERS[metric].per_role:
        return {None: pairs}
    overrides = current.get("role_weights") or {}
    group_of = {img: (roles.get(img) if roles.get(img) in overrides else None) for img in set(pairs["image_a"]) | set(pairs["image_b"])}
    ga, gb = pairs["image_a"].map(group_of), pairs["image_b"].map(group_of)
    names = sorted(ga.dropna().unique())  # pandas may map None to NaN (it does from 3.0)
    out = {None: pairs[ga.isna() & gb.isna()]}
    out.update({g: pairs[(ga == g) & (gb == g)] for g in names})
    return {g: frame for g, frame in out.items() if len(frame)}


def fit_role(role: str, pairs: pd.DataFrame, angle_means: pd.DataFrame, weights: dict[str, float],
             seed: int = 0, trials: int = DEFAULT_TRIALS, test_fraction: float = DEFAULT_TEST_FRACTION,
             min_pairs: int = DEFAULT_MIN_PAIRS) -> FitResult:
    """Fit the role's weights over its masked angles scored for every model in `pairs` (model_a, model_b, h).

    `angle_means`: model × angle mean scores. Angles of the mask not scored keep their current weight, so the
    written weights still sum to 1 and later runs that do score them are not silently zero-weighted.
    """
    models = sorted(set(pairs["model_a"]) | set(pairs["model_b"]))
    angles = [a for a in weights if a in angle_means.columns and angle_means.reindex(models)[a].notna().all()]
    if len(angles) < 2:
        raise TooFewPairs(f"role {role}: needs at least two of its angles ({', '.join(weights)}) scored for every "
                          f"judged model to fit weights; found {', '.join(angles) or 'none'}")
    table = angle_means.reindex(models)[angles].to_numpy(dtype=float)
    index = {m: i for i, m in enumerate(models)}
    ia = pairs["model_a"].map(index).to_numpy()
    ib = pairs["model_b"].map(index).to_numpy()
    h = pairs["h"].to_numpy()
    test = split_pairs(pairs, test_fraction, seed)
    _check_size(f"role {role}", h[~test], min_pairs)
    model_pairs = {tuple(sorted(p)) for p in zip(pairs["model_a"][~test], pairs["model_b"][~test])}
    if len(model_pairs) < 2:
        seen = "; ".join(" vs ".join(p) for p in sorted(model_pairs)) or "none"
        raise TooFewPairs(f"role {role}: the training judgments compare {len(model_pairs)} pair of models ({seen}); a role "
                          "fit predicts from the models' angle means, so one pair can only say which model wins and the "
                          "weights are not identified: judge at least three models")
    covered = sum(weights[a] for a in angles)

    def delta(params, rows):
        w = np.asarray([params[a] for a in angles])
        w = w / w.sum() if w.sum() > 0 else np.full(len(angles), 1.0 / len(angles))
        s = table @ w
        return s[ia[rows]] - s[ib[rows]]

    current = {a: weights[a] / covered for a in angles}
    best, n_trials = _optimise(lambda p: ppa(h[~test], delta(p, ~test)), angles, current, trials, seed)
    total = sum(best.values()) or 1.0
    after = {a: round(best[a] / total * covered, 4) if a in best else round(w, 4) for a, w in weights.items()}
    before = {a: round(w, 4) for a, w in weights.items()}
    result = _result(f"role {role}", before, after, h, test,
                     lambda p, rows: delta({a: p[a] for a in angles}, rows), n_trials)
    if (note := _held_out_note(pairs, test, model_pairs)) is not None:
        result.notes.append(note)
    unscored = [a for a in weights if a not in angles]
    if unscored:
        result.notes.append(f"angles {', '.join(unscored)} not scored for every judged model: kept at their current weight")
    return result


def _held_out_note(pairs: pd.DataFrame, test: np.ndarray, trained: set[tuple[str, str]]) -> str | None:
    """What the held-out PPA can say: the split holds out image pairs, not models, so a held-out judgment usually
    compares a model pair the training compared too; one that does not is counted and its pair named."""
    held = [tuple(sorted(p)) for p in zip(pairs["model_a"][test], pairs["model_b"][test])]
    if not held:
        return None
    new = sorted(set(held) - trained)
    shared = sum(p in trained for p in held)
    note = (f"{shared} of {len(held)} held-out judgments compare a model pair the training compared too "
            f"({len(trained)} pair(s)): held-out PPA says how the weights order these models on judgments not fitted, "
            "not how they carry to other models")
    if new:
        note += f"; {len(held) - shared} compare pair(s) the training did not: {'; '.join(' vs '.join(p) for p in new)}"
    return note


def _result(target, before, after, h, test, delta, n_trials) -> FitResult:
    rows_train, rows_test = ~test, test
    res = FitResult(target, before, after, int((h[rows_train] != 0).sum()), int((h[rows_test] != 0).sum()),
                    ppa(h[rows_train], delta(before, rows_train)), ppa(h[rows_train], delta(after, rows_train)),
                    ppa(h[rows_test], delta(before, rows_test)), ppa(h[rows_test], delta(after, rows_test)),
                    trials=n_trials)
    keep = rows_test & (h != 0)
    if keep.any():
        res.test_mcnemar = mcnemar(h[keep] * delta(before, keep) > 0, h[keep] * delta(after, keep) > 0)
    else:
        res.notes.append("no held-out non-tie judgments: held-out PPA is undefined")
    return res
