"""Pure calibration statistics against hand-computed values and independent references."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import kendalltau

from vistar.calibration import acc23, bootstrap_ci, bradley_terry, fit_bradley_terry, kendall_tau_b, krippendorff_alpha, mcnemar, pair_stats, ppa, units_of, win_matrix
from vistar.calibration.rescore import RESCORERS
from vistar.ontology import Ontology


def test_ppa_counts_metric_ties_as_wrong_and_ignores_human_ties():
    h = [1, 1, -1, 0, 1]
    delta = [0.2, -0.1, -0.3, 0.5, 0.0]
    # non-tie human pairs: right, wrong, right, (tie skipped), metric tie = wrong
    assert ppa(h, delta) == pytest.approx(2 / 4)
    assert math.isnan(ppa([0, 0], [0.1, 0.2]))


def test_pair_stats_table():
    s = pair_stats([1, -1, 0, 0, 1, -1], [0.3, 0.2, 0.0, 0.4, 0.0, -0.1], eps=0.0)
    assert (s.C, s.D, s.Th, s.Tm, s.Thm) == (2, 1, 1, 1, 1)


def test_acc23_by_hand():
    h = [1, 0, -1, 0]
    delta = [0.5, 0.05, -0.4, 0.1]
    # ε=0: 2/4 right; ε=0.05 ties pair 2: 3/4; ε=0.1 ties pairs 2 and 4: 4/4; ε=0.4 would untie nothing more useful
    assert acc23(h, delta) == (pytest.approx(1.0), pytest.approx(0.1))
    # no human ties: the best ε is 0 (tying anything can only lose), so acc23 equals PPA
    assert acc23([1, -1, 1], [0.2, -0.1, -0.3]) == (pytest.approx(2 / 3), 0.0)


def _acc23_bruteforce(h, delta):
    best = (-1.0, 0.0)
    for eps in sorted({0.0, *np.abs(delta)}):
        s = pair_stats(h, delta, eps)
        acc = (s.C + s.Thm) / s.n
        if acc > best[0] + 1e-12:
            best = (acc, eps)
    return best


def test_acc23_matches_exhaustive_search():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(1, 40))
        h = rng.choice([-1, 0, 1], size=n, p=[0.4, 0.2, 0.4])
        delta = np.round(rng.normal(size=n) * 0.3 + 0.2 * h, 2)  # rounding creates exact score ties
        acc, eps = acc23(h, delta)
        ref_acc, ref_eps = _acc23_bruteforce(h, delta)
        assert acc == pytest.approx(ref_acc) and eps == pytest.approx(ref_eps)


def test_kendall_tau_b_equals_scipy_on_all_item_pairs():
    """Over every pair of items, the pairwise τ-b equals the classic τ-b of the two score lists (ties in both)."""
    human = np.array([3, 1, 2, 2, 5, 4, 4, 1])
    metric = np.array([0.9, 0.1, 0.5, 0.4, 0.8, 0.8, 0.3, 0.1])
    h, d = [], []
    for i, j in itertools.combinations(range(len(human)), 2):
        h.append(int(np.sign(human[i] - human[j])))
        d.append(metric[i] - metric[j])
    assert kendall_tau_b(h, d) == pytest.approx(kendalltau(human, metric, variant="b").statistic)


def test_mcnemar_by_hand():
    a = [True] * 6 + [False] * 1 + [True] * 3 + [False] * 2
    b = [False] * 6 + [True] * 1 + [True] * 3 + [False] * 2
    res = mcnemar(a, b)
    assert (res.n, res.b, res.c) == (12, 6, 1)
    assert res.statistic == pytest.approx((6 - 1 - 1) ** 2 / 7)
    assert res.p_exact == pytest.approx(2 * (1 + 7) / 2 ** 7)  # two-sided binomial, k ≤ 1 of 7
    assert mcnemar([True, False], [True, False]).p_exact == 1.0


def test_bootstrap_ci_seeded_and_bracketing():
    h = np.array([1] * 30 + [-1] * 10)
    d = np.array([0.1] * 25 + [-0.1] * 5 + [-0.1] * 10)
    lo, hi, note = bootstrap_ci(ppa, (h, d), seed=1, resamples=300)
    assert note is None and lo <= ppa(h, d) <= hi and 0.7 < lo < hi < 1.0
    assert bootstrap_ci(ppa, (h, d), seed=1, resamples=300) == (lo, hi, None)


def test_bootstrap_gives_no_interval_it_cannot_support():
    """Too few independent pairs, or every resample equal: NaN bounds and the reason, never a zero-width interval."""
    few = bootstrap_ci(ppa, (np.array([1, -1] * 10), np.ones(20)), units=np.arange(20) // 4)  # 5 pairs of 4 votes
    assert math.isnan(few.low) and math.isnan(few.high) and "5 independent unit(s), fewer than 10" in few.note
    same = bootstrap_ci(ppa, (np.ones(40, int), np.ones(40)), seed=0, resamples=50)
    assert math.isnan(same.low) and "every resample gives 1" in same.note


def test_cluster_bootstrap_moves_the_votes_on_a_pair_together():
    """20 pairs with 5 identical votes each carry the evidence of 20 votes, not 100: with units the interval is
    exactly the one of 20 single votes (same seed, same draws); resampling votes would make it narrower."""
    rng = np.random.default_rng(0)
    h1, d1 = rng.choice([-1, 1], 20), rng.normal(size=20)
    h5, d5, units = np.repeat(h1, 5), np.repeat(d1, 5), np.repeat(np.arange(20), 5)
    assert bootstrap_ci(ppa, (h5, d5), seed=4, units=units) == bootstrap_ci(ppa, (h1, d1), seed=4)
    by_pair, by_vote = bootstrap_ci(ppa, (h5, d5), seed=4, units=units), bootstrap_ci(ppa, (h5, d5), seed=4)
    assert by_vote.high - by_vote.low < 0.6 * (by_pair.high - by_pair.low)
    assert np.array_equal(units_of(["x", "y", "x", "z"], ["y", "x", "z", "x"]), [0, 0, 1, 1])  # unordered pairs


@pytest.mark.parametrize("stat", [ppa, kendall_tau_b])
def test_bulk_resampled_statistics_equal_the_plain_ones(stat):
    """PPA and τ-b are evaluated for all resamples at once; a plain call per resample must give the same interval."""
    rng = np.random.default_rng(1)
    h, d, units = rng.choice([-1, 0, 1], 300), np.round(rng.normal(size=300), 1), rng.integers(0, 60, 300)
    assert bootstrap_ci(stat, (h, d), seed=3, resamples=200, units=units) == \
        bootstrap_ci(lambda a, b: stat(a, b), (h, d), seed=3, resamples=200, units=units)


def _coverage(sims: int, pairs: int, raters: int, units: bool, seed: int) -> float:
    """Share of simulated studies whose 95% PPA interval covers the true PPA. Each pair has its own chance q ~
    Beta(2, 1) that a rater agrees with the metric (true PPA = E[q] = 2/3), and `raters` independent votes."""
    rng = np.random.default_rng(seed)
    covered = 0
    for s in range(sims):
        q = rng.beta(2.0, 1.0, pairs)
        delta = np.repeat(rng.choice([-1.0, 1.0], pairs) * rng.uniform(0.1, 1.0, pairs), raters)
        agree = (rng.random((pairs, raters)) < q[:, None]).ravel()
        h = np.where(agree, np.sign(delta), -np.sign(delta)).astype(int)
        ci = bootstrap_ci(ppa, (h, delta), seed=s, resamples=500,
                          units=np.repeat(np.arange(pairs), raters) if units else None)
        covered += ci.low <= 2 / 3 <= ci.high
    return covered / sims


@pytest.mark.slow
def test_pair_bootstrap_covers_the_truth_at_the_nominal_rate():
    """5 raters per pair, 100 pairs, 2000 simulated studies (seeded; Monte Carlo error of the rate ≈ 0.005).
    Resampling votes treats correlated votes as independent and undercovers (≈ 0.8); resampling pairs does not."""
    assert 0.93 <= _coverage(2000, 100, 5, units=True, seed=0) <= 0.97
    assert _coverage(200, 100, 5, units=False, seed=0) < 0.88


def test_labels_must_be_exactly_minus_one_zero_or_one_and_differences_finite():
    with pytest.raises(ValueError, match="exactly"):
        ppa([1, 0.6], [0.1, 0.2])  # a 0.6 is not a tie
    with pytest.raises(ValueError, match="exactly"):
        acc23(["a", "b"], [0.1, 0.2])
    with pytest.raises(ValueError, match="exactly"):
        kendall_tau_b([1, math.nan], [0.1, 0.2])
    with pytest.raises(ValueError, match="not finite"):
        ppa([1, -1], [0.1, math.nan])
    with pytest.raises(ValueError, match="not finite"):
        acc23([1, -1], [math.inf, 0.2])
    assert ppa(np.array([1.0, -1.0]), [0.1, 0.2]) == 0.5  # float labels that are exactly ±1 are fine


def test_krippendorff_published_example():
    """Krippendorff (2011), 'Computing Krippendorff's Alpha-Reliability': 4 observers, 12 units."""
    n = None
    obs = [[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
           [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]]
    units = [[o[u] for o in obs if o[u] is not None] for u in range(12)]
    assert krippendorff_alpha(units, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(units, "ordinal") == pytest.approx(0.815, abs=5e-4)


def test_krippendorff_by_hand():
    # o11 = o22 = 2, o12 = o21 = 1; n = 6; D_o = 2/6, D_e = 2·3·3/(6·5) = 0.6 → α = 1 − (1/3)/0.6 = 4/9
    assert krippendorff_alpha([[1, 1], [2, 2], [1, 2]], "nominal") == pytest.approx(4 / 9)
    assert krippendorff_alpha([[-1, -1, -1], [1, 1], [0, 0]], "ordinal") == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]))  # no variation: undefined
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 2]], "interval")


def test_bradley_terry_two_items_by_hand():
    p = bradley_terry(np.array([[0, 3], [1, 0]]), prior=0.0)
    assert p[0] / p[1] == pytest.approx(3.0)
    assert np.prod(p) == pytest.approx(1.0)


def test_bradley_terry_matches_direct_likelihood_maximisation():
    models = ["a", "b", "c"]
    outcomes = [("a", "b", 1)] * 5 + [("b", "a", 1)] * 2 + [("b", "c", 1)] * 4 + [("c", "b", 1)] + \
               [("a", "c", 1)] * 3 + [("c", "a", 1)] * 2 + [("a", "c", 0.5)] * 2
    w = win_matrix(models, outcomes)
    assert w[0, 2] == pytest.approx(3 + 1) and w[2, 0] == pytest.approx(2 + 1)  # ties: half a win each
    p = bradley_terry(w, prior=0.0)

    def nll(theta):
        t = np.concatenate([[0.0], theta])
        return -sum(w[i, j] * (t[i] - np.logaddexp(t[i], t[j])) for i in range(3) for j in range(3) if i != j)

    ref = minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    assert np.log(p[1:] / p[0]) == pytest.approx(ref, abs=1e-5)


def test_bradley_terry_prior_keeps_winless_item_finite():
    p = bradley_terry(win_matrix(["a", "b"], [("a", "b", 1)] * 4), prior=0.1)
    assert np.all(np.isfinite(np.log(p))) and p[0] / p[1] == pytest.approx(4.1 / 0.1)


def test_bradley_terry_says_when_strengths_are_not_estimates():
    """`a` never loses: no MLE exists. Without a prior the MM iteration drifts apart and is stopped unconverged;
    with one, the gap is the prior's. A connected set of comparisons gives no warning."""
    never_lost = win_matrix(["a", "b", "c"], [("a", "b", 1)] * 4 + [("b", "c", 1), ("c", "b", 1)])
    drifting = fit_bradley_terry(never_lost, prior=0.0, max_iter=2000, names=["a", "b", "c"])
    assert not drifting.converged
    assert any("a never lost to the others" in w and "without bound" in w for w in drifting.warnings)
    assert any("not converged after 2000 iterations" in w for w in drifting.warnings)
    huge = fit_bradley_terry(win_matrix(["a", "b"], [("a", "b", 1)] * 4), prior=1e-300)  # strengths ±350
    assert any("diverging" in w for w in huge.warnings)
    by_prior = fit_bradley_terry(never_lost, prior=0.1, names=["a", "b", "c"])
    assert by_prior.converged and any("set by the prior of 0.1" in w for w in by_prior.warnings)
    fine = fit_bradley_terry(win_matrix(["a", "b"], [("a", "b", 1)] * 3 + [("b", "a", 1)]), prior=0.0)
    assert fine.converged and fine.warnings == [] and fine.strengths[0] / fine.strengths[1] == pytest.approx(3.0)


def test_rescorers_by_hand():
    tr = RESCORERS["TR"]
    sub = np.stack([tr.extract('{"char": 0.8, "token": 0.5}'), tr.extract({"char": 1.0, "token": 0.0})])
    shipped = Ontology.load()   # a re-scorer takes the metric's whole block, as calibration edits it
    assert tr.combine(sub, {**shipped.metric_params("TR"), "w_char": 0.25}, np.array(["GD", "GD"])) == pytest.approx([0.25 * 0.8 + 0.75 * 0.5, 0.25])
    cpa = RESCORERS["CPA"]
    sub = np.stack([cpa.extract({"s_count": 1.0, "s_posture": 0.5, "s_expression": None}),
                    cpa.extract({"s_count": 1.0, "s_posture": 0.5, "s_expression": 0.0})])
    params = {**shipped.metric_params("CPA"), "w_c": 0.5, "w_p": 0.25, "w_e": 0.25,
              "role_weights": {"MS": {"w_c": 0.0, "w_p": 0.5, "w_e": 0.5}}}
    got = cpa.combine(sub, params, np.array(["GD", "MS"]))
    # GD: expression absent, weights renormalised over count and posture; MS: its own weights
    assert got == pytest.approx([(0.5 * 1.0 + 0.25 * 0.5) / 0.75, (0.5 * 0.5 + 0.5 * 0.0) / 1.0])
    assert np.isnan(tr.extract("not json")).all()
