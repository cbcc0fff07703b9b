"""The overall score and its ranking follow the role weights (docs/report.md, "Overall"): an angle whose weight is 0 in
every role (GC by default) is shown apart and never averaged in, and every note is true of the rows."""
from __future__ import annotations

import math

import pytest
import yaml

from tests.support.scores_builder import row, write_run
from vistar.engine.store import read_scores
from vistar.ontology import Ontology
from vistar.report import build_report_data
from vistar.report.render import table3


def _data(tmp_path, rows, ontology=None):
    return build_report_data(read_scores(write_run(tmp_path, rows)), ontology or Ontology.load(), resamples=200)


def test_a_tr_gc_run_overall_is_tr_alone(tmp_path):
    # the run: m1 TR 100, GC 0.7 -> the old overall was their mean, 50.35
    data = _data(tmp_path, [row("m1", "t", "TR", 1.0), row("m1", "g", "GC", 0.007, role="PH")])
    overall = data.overall.set_index("model")
    assert overall.loc["m1", "overall"] == pytest.approx(100.0)
    assert overall.loc["m1", "angles"] == "TR" and overall.loc["m1", "unweighted"] == "GC"
    assert overall.loc["m1", ["ci_low", "ci_high"]].isna().all()   # one image: no interval, not [100, 100]
    # TR carries GD 1/4 + MS 1/4 + ED 1/3 of the seven roles' weight
    assert overall.loc["m1", "covered_weight"] == pytest.approx((1 / 4 + 1 / 4 + 1 / 3) / 7)
    # the overview shows GC apart: after the overall columns, named as outside it
    assert list(table3(data).columns) == ["model", "TR", "overall", "overall 95% CI", "rank", "GC (weight 0)"]


def test_a_zero_weight_angle_does_not_decide_the_ranking(tmp_path):
    # m2 leads on the plain mean (95 vs 50) only through GC; on the weighted angles m1 leads
    rows = [row("m1", "t", "TR", 1.0), row("m1", "g", "GC", 0.0), row("m2", "t", "TR", 0.9), row("m2", "g", "GC", 1.0)]
    data = _data(tmp_path, rows)
    assert list(data.overall["model"]) == ["m1", "m2"]
    assert list(data.overall["overall"]) == pytest.approx([100.0, 90.0])
    assert not data.ranking_notes  # GD, MS, ED (TR only) order the models as the overall does


def test_overall_is_the_mean_role_weight_average_by_hand(tmp_path):
    # weights overlay: GD TR 3, CSE 1, SF/MA/GC 0; everything else the default (GC 0 in IL, PH, GA)
    overlay = tmp_path / "w.yaml"
    overlay.write_text(yaml.safe_dump({"role_weights": {"GD": {"TR": 3, "CSE": 1, "SF": 0, "MA": 0, "GC": 0}}}))
    onto = Ontology.load(overrides=[overlay])
    from vistar.report.tables import overall_weights  # here: the rest of the file runs on a report without it

    # summed over the 7 roles: TR = GD 3/4 + MS 1/4 + ED 1/3 = 4/3; LI = SA 1/4 + IL 1/3 + PH 1/3 = 11/12;
    # CSE = GD 1/4 + SA 1/4 + ED 1/3 = 5/6; GC = 0 everywhere
    w = overall_weights(onto)
    assert (w["TR"], w["LI"], w["CSE"], w["GC"]) == pytest.approx((4 / 3 / 7, 11 / 12 / 7, 5 / 6 / 7, 0.0))
    assert sum(w.values()) == pytest.approx(1.0)
    rows = [row("A", "t", "TR", 0.7), row("A", "l", "LI", 0.3), row("A", "c", "CSE", 0.5), row("A", "g", "GC", 0.9)]
    data = _data(tmp_path / "run", rows, onto)
    expected = (4 / 3 * 70 + 11 / 12 * 30 + 5 / 6 * 50) / (4 / 3 + 11 / 12 + 5 / 6)
    assert data.overall.set_index("model").loc["A", "overall"] == pytest.approx(expected)


def test_a_weight_given_to_gc_brings_it_into_the_overall(tmp_path):
    overlay = tmp_path / "w.yaml"
    overlay.write_text(yaml.safe_dump({"role_weights": {"PH": {"GC": 1}}}))
    onto = Ontology.load(overrides=[overlay])
    # PH = LI, PSC, GC, MA at 1/4 each: GC's overall weight is 1/4 / 7, TR's (1/4 + 1/4 + 1/3) / 7
    data = _data(tmp_path / "run", [row("m1", "t", "TR", 1.0), row("m1", "g", "GC", 0.2)], onto)
    tr, gc = 5 / 6, 1 / 4
    assert data.overall.loc[0, "overall"] == pytest.approx((tr * 100 + gc * 20) / (tr + gc))
    assert data.overall.loc[0, "unweighted"] == ""
    assert not any("weight 0 in every role" in n for n in data.notes)


def test_core_and_hard_follow_the_same_weights(tmp_path):
    rows = [row("A", "t1", "TR", 0.8, set_="core"), row("A", "t2", "TR", 0.4, set_="hard"),
            row("A", "g1", "GC", 0.0, set_="core"), row("A", "g2", "GC", 1.0, set_="hard")]
    o = _data(tmp_path, rows).overall.set_index("model")
    assert (o.loc["A", "core"], o.loc["A", "hard"], o.loc["A", "drop_pct"]) == pytest.approx((80.0, 40.0, 50.0))


def test_every_note_of_a_tr_gc_run_is_true_of_its_rows(tmp_path):
    rows = [row("m1", "t", "TR", 1.0), row("m1", "g", "GC", 0.007), row("m2", "t", "TR", 0.5)]
    notes = _data(tmp_path, rows).notes
    roles = {n.split(" ")[1]: n for n in notes if n.startswith("Role ")}
    # IL = SF, CUL, LI, GC and PH = LI, PSC, GC, MA: GC was scored (ok rows), it only has weight 0 there
    assert roles["IL"] == ("Role IL (Illustrator/Concept Artist): none of its weighted angles (SF, CUL, LI) were scored; "
                           "no role score. GC was scored but has weight 0 in this role.")
    assert roles["PH"] == ("Role PH (Photographer): none of its weighted angles (LI, PSC, MA) were scored; "
                           "no role score. GC was scored but has weight 0 in this role.")
    assert roles["SA"] == "Role SA (Storyboard Artist): none of its weighted angles (CSE, CPA, LI, PSC) were scored; no role score."
    assert not any("GC" in n and "none of its" in n and "weight 0" not in n for n in notes)
    assert "GC (Geometric Consistency) has weight 0 in every role: its scores are shown apart, not averaged into the overall or any role score." in notes
    # m2 lacks GC, which weighs nothing: its overall is not less comparable for it
    gap = next(n for n in notes if n.startswith("Model m2 "))
    assert gap == "Model m2 has no score for GC (other models do); GC has weight 0 in every role, so its overall and role scores are unaffected."


def test_a_run_of_zero_weight_angles_only_has_no_overall(tmp_path):
    data = _data(tmp_path, [row("m1", "g", "GC", 0.4)])
    assert math.isnan(data.overall.loc[0, "overall"]) and data.overall.loc[0, "unweighted"] == "GC"
    assert any(n.startswith("No scored angle carries role weight") for n in data.notes)
