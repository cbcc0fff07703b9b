"""`--fit` on synthetic preferences with a known answer: humans follow one sub-score (or one angle) only."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.support.scores_builder import row, write_run
from vistar.calibration import calibrate, write_outputs
from vistar.calibration.fit import TooFewPairs, fit_metric, fit_role, split_pairs
from vistar.engine import registry
from vistar.ontology import Ontology


@pytest.fixture(scope="module")
def tr_run(tmp_path_factory):
    """120 prompts, two models. Humans prefer the image with the better character match; the token match
    points the other way by up to twice as much, so w_char = 0.5 gets about half the pairs wrong and
    any w_char > 2/3 gets all of them right."""
    rng = np.random.default_rng(11)
    rows, pairs = [], []
    for i in range(120):
        c_lo = rng.uniform(0.2, 0.6)
        d1 = rng.uniform(0.05, 0.3)
        d2 = rng.uniform(0.0, 2 * d1)
        t_hi = rng.uniform(0.4, 0.9)
        good, bad = {"char": c_lo + d1, "token": t_hi - d2}, {"char": c_lo, "token": t_hi}
        flip = rng.random() < 0.5
        for model, det in (("m1", good if not flip else bad), ("m2", bad if not flip else good)):
            rows.append(row(model, f"p{i}", "TR", 0.5 * det["char"] + 0.5 * det["token"], details=det))
        pairs.append((f"m1/p{i}.png", f"m2/p{i}.png", "b" if flip else "a"))
    run = write_run(tmp_path_factory.mktemp("trfit"), rows)
    path = run / "pairs.csv"
    pd.DataFrame(pairs, columns=["image_a", "image_b", "preferred"]).to_csv(path, index=False)
    return run, path


def test_fit_recovers_char_weight_and_generalises(tr_run):
    run, pairs = tr_run
    result = calibrate(run, pairs, fit=True, seed=3, resamples=100, trials=40)
    assert 0.3 < result.metrics.set_index("metric").loc["TR", "ppa"] < 0.7  # the stored scores (w_char 0.5) half wrong
    (fit,) = result.fits
    assert fit.target == "metric TR" and fit.params_before == {"w_char": 0.5}
    assert fit.params_after["w_char"] > 2 / 3 - 0.02
    assert 0.3 < fit.test_ppa_before < 0.7 and fit.test_ppa_after >= 0.95
    assert fit.train_ppa_after == pytest.approx(1.0)
    assert fit.test_mcnemar is not None and fit.test_mcnemar.c > fit.test_mcnemar.b  # the fitted weight wins on held-out pairs
    assert fit.train_pairs + fit.test_pairs == 120


def test_fit_is_deterministic_and_writes_an_overlay_the_ontology_accepts(tr_run, tmp_path):
    run, pairs = tr_run
    first = calibrate(run, pairs, fit=True, seed=5, resamples=100, trials=30)
    second = calibrate(run, pairs, fit=True, seed=5, resamples=100, trials=30)
    assert first.fits[0].params_after == second.fits[0].params_after
    assert first.weights_yaml == second.weights_yaml
    paths = write_outputs(first, tmp_path)
    overlay = yaml.safe_load(paths["weights"].read_text())
    assert overlay == {"metrics": {"TR": {"params": {"w_char": first.fits[0].params_after["w_char"]}}}}
    onto = Ontology.load(overrides=[paths["weights"]])
    assert onto.metric_params("TR")["w_char"] == first.fits[0].params_after["w_char"]
    assert onto.metric_params("TR")["min_confidence"] == Ontology.load().metric_params("TR")["min_confidence"]


def test_refuses_too_few_pairs(tr_run):
    run, pairs = tr_run
    result = calibrate(run, pairs, fit=True, seed=0, resamples=100, trials=5, min_pairs=200)
    assert result.fits == [] and result.weights_yaml is None
    assert any("metric TR: only" in r and "need at least 200" in r for r in result.refusals)
    frame = pd.DataFrame({"image_a": ["x", "y"], "image_b": ["y", "z"], "h": [1, -1]})
    with pytest.raises(TooFewPairs, match="only 1 non-tie|only 2 non-tie|only 0 non-tie"):
        fit_metric("TR", frame, {"x": {"char": 1, "token": 0}, "y": {"char": 0, "token": 1}, "z": {"char": 0, "token": 0}},
                   {"w_char": 0.5}, ["w_char"], min_pairs=10, test_fraction=0.0)


def test_rows_without_the_sub_scores_are_named_not_counted_as_too_few(tmp_path):
    """Rows whose details lack TR's `char`/`token` (an older metric version, rows written by hand) cannot be
    re-scored: the refusal says so, rather than "only 0 non-tie judgment(s)"."""
    rows = [row(m, f"p{i}", "TR", s) for i in range(60) for m, s in (("m1", 0.8), ("m2", 0.4))]   # details {}
    run = write_run(tmp_path / "run", rows)
    pd.DataFrame([(f"m1/p{i}.png", f"m2/p{i}.png", "a") for i in range(60)],
                 columns=["image_a", "image_b", "preferred"]).to_csv(tmp_path / "pairs.csv", index=False)
    result = calibrate(run, tmp_path / "pairs.csv", fit=True, resamples=100, trials=5)
    version = registry.metric("TR").version
    assert result.fits == [] and result.refusals == [
        f"metric TR: none of the 60 judgment(s) can be re-scored: the rows' details carry none of char, token, the sub-scores "
        f"metric TR (version {version}) re-scores from; rows written by another version or by hand may not store them. "
        "Re-run `vistar score` to refit."]
    frame = pd.DataFrame({"image_a": [f"a{i}" for i in range(20)], "image_b": [f"b{i}" for i in range(20)], "h": [1] * 20})
    details = {f"a{i}": {"char": 1, "token": 0} for i in range(20)} | {f"b{i}": {"char": 0, "token": 0} for i in range(5)}
    with pytest.raises(TooFewPairs, match=r"only 5 non-tie training judgment\(s\), need at least 10 .*; 15 of the 20 "
                                          r"judgment\(s\) left out: the rows' details carry none of char, token"):
        fit_metric("TR", frame, details, {"w_char": 0.5}, ["w_char"], min_pairs=10, test_fraction=0.0)
    fitted = fit_metric("TR", frame, details, Ontology.load().metric_params("TR"), ["w_char"], min_pairs=3,
                        test_fraction=0.0, trials=3)
    assert fitted.train_pairs == 5 and fitted.notes[-1].startswith("15 of the 20 judgment(s) left out: the rows' details")


def test_split_keeps_votes_on_one_pair_together():
    frame = pd.DataFrame({"image_a": ["a", "b", "a", "c", "d", "c"], "image_b": ["b", "a", "c", "d", "c", "e"]})
    test = split_pairs(frame, 0.5, seed=1)
    assert test[0] == test[1] and test[3] == test[4]  # (a,b) twice, (c,d) twice: same side
    assert test.tolist() == split_pairs(frame, 0.5, seed=1).tolist()


@pytest.fixture(scope="module")
def role_run(tmp_path_factory):
    """Four models whose TR and CSE means run opposite ways; Educator judgments follow CSE only.
    Uniform ED weights rank the models backwards (PPA 0); CSE must outweigh TR (share > 5/9) to get them right."""
    cse = {"M0": 0.9, "M1": 0.7, "M2": 0.5, "M3": 0.3}
    tr = {"M0": 0.1, "M1": 0.35, "M2": 0.6, "M3": 0.85}
    rows, pairs = [], []
    for model in cse:
        rows += [row(model, f"tr{k}", "TR", tr[model], role="ED", details={"char": tr[model], "token": tr[model]}) for k in range(3)]
        rows += [row(model, f"cse{k}", "CSE", cse[model] + 0.01 * (k % 3 - 1), role="ED") for k in range(15)]
    models = list(cse)
    for i, a in enumerate(models):
        for b in models[i + 1:]:
            for k in range(15):
                first, second = (a, b) if k % 2 else (b, a)
                pairs.append((f"{first}/cse{k}.png", f"{second}/cse{k}.png", "a" if cse[first] > cse[second] else "b", "ED"))
    run = write_run(tmp_path_factory.mktemp("rolefit"), rows)
    path = run / "pairs.csv"
    pd.DataFrame(pairs, columns=["image_a", "image_b", "preferred", "role"]).to_csv(path, index=False)
    return run, path


def test_role_weights_fit_follows_the_judged_angle(role_run, tmp_path):
    run, pairs = role_run
    result = calibrate(run, pairs, fit=True, seed=2, resamples=100, trials=40)
    (fit,) = [f for f in result.fits if f.target == "role ED"]
    w = fit.params_after
    assert set(w) == {"TR", "CSE", "PSC"}
    assert w["PSC"] == pytest.approx(1 / 3, abs=1e-3)              # unscored: kept
    assert w["CSE"] / (w["CSE"] + w["TR"]) > 5 / 9
    assert fit.test_ppa_before == pytest.approx(0.0) and fit.test_ppa_after == pytest.approx(1.0)
    onto = Ontology.load(overrides=[write_outputs(result, tmp_path)["weights"]])
    assert onto.role_weights("ED")["CSE"] == pytest.approx(w["CSE"] / sum(w.values()))
    # CSE pairs also give the CSE metric a perfect PPA; Bradley–Terry agrees on the order
    assert result.metrics.set_index("metric").loc["CSE", "ppa"] == pytest.approx(1.0)
    bt = result.bradley_terry.set_index("model")
    assert list(bt.sort_values("rank_human").index) == ["M0", "M1", "M2", "M3"]
    assert (bt["rank_human"] == bt["rank_CSE"]).all()


def test_judgment_angle_selects_metric_and_raters_are_oriented():
    from vistar.calibration.calibrate import metric_pairs, rater_agreement

    ok = pd.DataFrame({"image": ["x", "y", "x", "y"], "model": ["m", "n", "m", "n"], "role": "GD",
                       "angle": ["TR", "TR", "TR", "TR"], "metric": ["TR", "TR", "TR_char", "TR_char"],
                       "score": [0.9, 0.1, 0.2, 0.8], "details": "{}"})
    pairs = pd.DataFrame({"image_a": ["x", "x"], "image_b": ["y", "y"], "h": [1, 1], "angle": ["TR", "LI"],
                          "rater": [None, None], "role": [None, None], "line": [2, 3]})
    got = metric_pairs(pairs, ok, "TR")
    assert list(got["line"]) == [2] and got["s_a"].iloc[0] == 0.9  # the LI judgment is not TR's to explain
    # (a,b) written both ways and agreeing; (c,d) agreeing on the other side; (e,f) split -> α = 4/9 (see stats test)
    votes = pd.DataFrame({"image_a": ["a", "b", "c", "c", "e", "e"], "image_b": ["b", "a", "d", "d", "f", "f"],
                          "h": [1, -1, -1, -1, 1, -1], "rater": ["r1", "r2", "r1", "r2", "r1", "r2"]})
    agreement = rater_agreement(votes)
    assert agreement["raters"] == 2 and agreement["alpha_nominal"] == pytest.approx(4 / 9)


@pytest.fixture(scope="module")
def cpa_run(tmp_path_factory):
    """CPA judgments in two weight groups: Storyboard (SA has its own CPA weights in the ontology) where people
    follow posture only, and Graphic Design (default weights) where they follow the person count only.
    The other two sub-scores point the other way by up to twice as much, so the stored weights get about
    half the pairs wrong and a weight share above 2/3 on the followed term gets all of them right."""
    rng = np.random.default_rng(4)
    onto = Ontology.load()
    defaults = onto.metric_params("CPA")
    rows, pairs = [], []
    for role, follow in (("SA", "s_posture"), ("GD", "s_count")):
        others = [k for k in ("s_count", "s_posture", "s_expression") if k != follow]
        w = {**defaults, **(defaults["role_weights"].get(role) or {})}
        for i in range(110):
            d1 = rng.uniform(0.05, 0.2)
            base = {k: rng.uniform(0.3, 0.5) for k in ("s_count", "s_posture", "s_expression")}
            better = {follow: base[follow] + d1, **{k: base[k] - rng.uniform(0, 2 * d1) for k in others}}
            for model, det in (("m1", better), ("m2", base)):
                score = sum(w[f"w_{k[2]}"] * det[k] for k in det) / sum(w[f"w_{k[2]}"] for k in det)
                rows.append(row(model, f"{role}{i}", "CPA", score, role=role, details=det))
            pairs.append((f"m1/{role}{i}.png", f"m2/{role}{i}.png", "a"))
    run = write_run(tmp_path_factory.mktemp("cpafit"), rows)
    path = run / "pairs.csv"
    pd.DataFrame(pairs, columns=["image_a", "image_b", "preferred"]).to_csv(path, index=False)
    return run, path


def test_cpa_default_and_per_role_weights_are_fitted_separately(cpa_run, tmp_path):
    run, pairs = cpa_run
    result = calibrate(run, pairs, fit=True, seed=1, resamples=100, trials=60)
    fits = {f.target: f for f in result.fits}
    assert set(fits) == {"metric CPA", "metric CPA role SA"}
    sa, default = fits["metric CPA role SA"], fits["metric CPA"]
    assert sa.params_before == {"w_c": 0.3, "w_p": 0.5, "w_e": 0.2}
    assert sa.params_after["w_p"] > 0.6 and default.params_after["w_c"] > 0.6
    assert sum(sa.params_after.values()) == pytest.approx(1.0, abs=1e-3)
    assert sa.test_ppa_after >= 0.95 and default.test_ppa_after >= 0.95
    assert sa.test_ppa_before < 0.8 and default.test_ppa_before < 0.8
    onto = Ontology.load(overrides=[write_outputs(result, tmp_path)["weights"]])
    params = onto.metric_params("CPA")
    assert params["role_weights"]["SA"] == sa.params_after
    assert params["role_weights"]["MS"] == Ontology.load().metric_params("CPA")["role_weights"]["MS"]  # untouched
    assert {k: params[k] for k in ("w_c", "w_p", "w_e")} == default.params_after


def test_role_fit_refuses_one_pair_of_models_and_says_what_held_out_means(role_run, tmp_path):
    """Two models: a role fit can only pick the winner (any weights giving it are equal), so it is refused with a
    reason; with four models it runs and its note says the held-out judgments share the training's model pairs."""
    run, pairs = role_run
    frame = pd.read_csv(pairs)
    two = frame[frame["image_a"].str.startswith(("M0/", "M1/")) & frame["image_b"].str.startswith(("M0/", "M1/"))]
    path = tmp_path / "two.csv"
    two.to_csv(path, index=False)
    result = calibrate(run, path, fit=True, seed=2, resamples=100, trials=5, min_pairs=5)
    assert not [f for f in result.fits if f.target == "role ED"]
    assert any("role ED" in r and "one pair can only say which model wins" in r and "M0 vs M1" in r
               for r in result.refusals)
    (fit,) = [f for f in calibrate(run, pairs, fit=True, seed=2, resamples=100, trials=5).fits if f.target == "role ED"]
    (note,) = [n for n in fit.notes if "held-out judgments" in n]
    assert re.match(r"(\d+) of \1 held-out judgments compare a model pair the training compared too \(6 pair\(s\)\)", note)
    assert "did not" not in note


def test_a_role_fit_names_held_out_model_pairs_the_training_never_compared():
    """A-B and A-C judgments, and one B-C: with a split that holds out the only B-C judgment, the note must not
    claim every held-out judgment compares a training pair."""
    rows = [(f"A/{i}.png", f"{m}/{i}.png", "A", m, 1) for i in range(12) for m in "BC"] + [("B/y.png", "C/y.png", "B", "C", -1)]
    pairs = pd.DataFrame(rows, columns=["image_a", "image_b", "model_a", "model_b", "h"])
    means = pd.DataFrame({"TR": [80, 50, 40], "LI": [30, 60, 70]}, index=["A", "B", "C"])
    seed = next(s for s in range(200) if split_pairs(pairs, 0.3, s)[-1])   # B-C held out: training has none
    held = pairs[split_pairs(pairs, 0.3, seed)]
    fit = fit_role("ED", pairs, means, {"TR": 0.5, "LI": 0.5}, seed=seed, trials=5, test_fraction=0.3, min_pairs=5)
    (note,) = [n for n in fit.notes if "held-out judgments" in n]
    assert note.startswith(f"{len(held) - 1} of {len(held)} held-out judgments compare a model pair the training "
                           "compared too (2 pair(s))")
    assert note.endswith("; 1 compare pair(s) the training did not: B vs C")
