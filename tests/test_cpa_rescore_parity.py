"""Calibration re-scores CPA with the metric's own formula: for every prompt role and every mix of terms, the
score recomputed from a row's stored details equals the score the metric wrote, also under other weights."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from tests.support.posed_people import PARAMS, score, two_people
from vistar.api import parse
from vistar.calibration.rescore import RESCORERS
from vistar.metrics import cpa_combine
from vistar.metrics.cpa import METRIC
from vistar.metrics.cpa_params import CPAParams, RoleWeights
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt

SHIPPED = Ontology.load().metric_params("CPA")   # the block as calibration edits it

CONTROLS = [{"count": 2}, {"count": 3, "posture": "standing"}, {"posture": ["sitting", "standing"]},
            {"count": 2, "posture": ["standing", "sitting"], "expression": ["sad", "happy"]},
            {"expression": "happy"}, {"count": 1, "expression": ["happy"]}]
ROLES = ["SA", "MS", "GA", "GD", "ED"]   # with and without their own role weights


def _rows():  # scored with the shipped parameters (what a run stores)
    out = []
    for controls in CONTROLS:
        for role in ROLES:
            res = score(two_people(), controls, role)
            assert res.status == "ok", res.error
            out.append((json.loads(json.dumps(res.details)), role, res.score))
    return out


def _rescored(rows, params):
    rescorer = RESCORERS["CPA"]
    sub = np.stack([rescorer.extract(d) for d, _, _ in rows])
    return rescorer.combine(sub, params, np.asarray([r for _, r, _ in rows], dtype=object))


def test_rescore_equals_the_metric_on_every_role_and_term_mix():
    rows = _rows()
    assert len({round(s, 6) for _, _, s in rows}) > 5      # the cases really differ
    assert _rescored(rows, SHIPPED).tolist() == [s for _, _, s in rows]   # bit-identical


def test_rescore_follows_new_weights_as_a_rerun_would():
    other = {**SHIPPED, "w_c": 0.7, "w_p": 0.1, "w_e": 0.2, "role_weights": {"SA": {"w_c": 0.1, "w_p": 0.1, "w_e": 0.8}}}
    rows_before = _rows()
    typed = parse(CPAParams, other, "metrics.CPA.params")
    rerun = [METRIC.fn(two_people(), c, typed, parse_prompt(f"[{r}|CPA] people")).score for c in CONTROLS for r in ROLES]
    assert _rescored(rows_before, other).tolist() == pytest.approx(rerun, abs=1e-12)


def test_combine_by_hand():
    w = {"w_c": 0.5, "w_p": 0.25, "w_e": 0.25}
    assert cpa_combine.combine_one(1.0, None, 0.0, w) == pytest.approx(0.5 / 0.75)
    assert cpa_combine.combine_one(None, None, None, w) is None
    assert cpa_combine.combine_one(0.4, 1.0, None, {**w, "w_c": 0.0}) == 1.0
    params = replace(PARAMS, **w, role_weights={"SA": RoleWeights(w_e=1.0)})
    assert cpa_combine.weights(params, "SA") == {**w, "w_e": 1.0}
    assert cpa_combine.weights(params, "MS") == w                                      # no override: the defaults
