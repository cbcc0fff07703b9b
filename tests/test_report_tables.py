"""Report numbers against hand-computed values on a hand-built run (3 models, 3 angles, core/hard, errors, gaps)."""
from __future__ import annotations

import math

import pytest
import yaml

from tests.support.scores_builder import row, write_run
from vistar.engine.store import read_scores
from vistar.ontology import Ontology
from vistar.report import build_report_data
from vistar.report.bootstrap import bootstrap_means, cell_rng, percentile_ci

# model -> angle -> [(score, set)]
DATA = {
    "A": {"TR": [(0.9, "core"), (0.7, "core"), (0.5, "hard")], "LI": [(0.2, "core"), (0.4, "core")], "CSE": [(0.5, "core")]},
    "B": {"TR": [(0.4, "core"), (0.6, "core"), (0.4, "hard")], "LI": [(0.8, "core"), (0.9, "core")], "CSE": [(0.6, "core")]},
    "C": {"TR": [(0.5, "core"), (0.5, "hard")], "CSE": [(0.3, "core")]},
}


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    rows = []
    for model, angles in DATA.items():
        for angle, vals in angles.items():
            rows += [row(model, f"{angle}-{i}", angle, s, set_=st) for i, (s, st) in enumerate(vals)]
    rows.append(row("C", "TR-err", "TR", None, status="error", error="feature 'ocr' failed: boom", set_="core"))
    rows.append(row("C", "LI-0", "LI", None, status="skipped", error="missing weight depth", set_="core"))
    rows.append(row("A", "TR-0", "TR", 0.1, metric="TR_char", set_="core"))  # a sub-metric: not the angle score
    return read_scores(write_run(tmp_path_factory.mktemp("run"), rows))


@pytest.fixture(scope="module")
def data(scores, tmp_path_factory):
    overlay = tmp_path_factory.mktemp("w") / "weights.yaml"
    overlay.write_text(yaml.safe_dump({"role_weights": {"GD": {"TR": 3, "CSE": 1, "SF": 0, "MA": 0, "GC": 0}}}))
    return build_report_data(scores, Ontology.load(overrides=[overlay]), seed=7, resamples=500)


def cell(data, model, angle):
    return data.angle_scores.set_index(["model", "angle"]).loc[(model, angle)]


def test_angle_means_and_counts(data):
    assert cell(data, "A", "TR")["mean"] == pytest.approx(70.0)
    assert cell(data, "B", "TR")["mean"] == pytest.approx(140 / 3)
    assert cell(data, "B", "LI")["mean"] == pytest.approx(85.0)
    c_tr = cell(data, "C", "TR")
    assert (c_tr.n_ok, c_tr.n_error, c_tr.n_skipped) == (2, 1, 0)
    c_li = cell(data, "C", "LI")
    assert (c_li.n_ok, c_li.n_skipped) == (0, 1) and math.isnan(c_li["mean"])


def test_intervals_need_ten_images_and_some_spread(tmp_path):
    """Calibration's rule: no CI from fewer than 10 images or of zero width, nor for a score built on such a cell."""
    rows = [row("A", f"t{i}", "TR", 0.5 + 0.04 * i) for i in range(12)]   # 12 images, spread: an interval
    rows += [row("B", f"t{i}", "TR", 0.5) for i in range(12)]            # 12 equal scores: every resample 50
    rows += [row("A", "l0", "LI", 0.8), row("B", "l0", "LI", 0.6)]        # one image each
    data = build_report_data(read_scores(write_run(tmp_path, rows)), Ontology.load(), seed=7, resamples=500)
    a_tr = cell(data, "A", "TR")
    assert a_tr["mean"] == pytest.approx(72.0) and 50 < a_tr.ci_low < 72 < a_tr.ci_high < 94
    assert all(math.isnan(cell(data, m, a)[b]) for m, a in [("B", "TR"), ("A", "LI"), ("B", "LI")] for b in ["ci_low", "ci_high"])
    assert data.overall[["ci_low", "ci_high"]].isna().all().all()   # TR with LI: LI has one image
    roles = data.role_scores.set_index(["role", "model"])
    assert (roles.loc[("MS", "A"), "angles_used"], roles.loc[("MS", "A"), "ci_low"]) == ("TR", a_tr.ci_low)
    assert "LI" in roles.loc[("SA", "A"), "angles_used"] and math.isnan(roles.loc[("SA", "A"), "ci_low"])
    assert ("No 95% CI (shown as —) where a zero-width or small-sample interval would claim a certainty the data cannot "
            "give: fewer than 10 scored images in A LI (1), B LI (1); every resample gives the same mean in B TR.") in " ".join(data.notes)


def test_the_report_and_calibration_share_one_small_sample_rule():
    from vistar.calibration.agreement import MIN_UNITS as CALIBRATION
    from vistar.report.bootstrap import MIN_UNITS as REPORT

    assert REPORT == CALIBRATION == 10


def test_bootstrap_is_seeded(scores):
    first = build_report_data(scores, Ontology.load(), seed=7, resamples=500)
    second = build_report_data(scores, Ontology.load(), seed=7, resamples=500)
    assert first.role_scores[["ci_low", "ci_high"]].equals(second.role_scores[["ci_low", "ci_high"]])
    a = bootstrap_means([1.0, 2.0, 4.0, 8.0], cell_rng(7, "A", "TR"), 50)
    b = bootstrap_means([1.0, 2.0, 4.0, 8.0], cell_rng(8, "A", "TR"), 50)
    assert not (a == b).all()


def test_bootstrap_helpers_by_hand():
    means = bootstrap_means([0.0, 1.0], cell_rng(0, "x"), resamples=2000)
    assert set(means) <= {0.0, 0.5, 1.0}
    assert means.mean() == pytest.approx(0.5, abs=0.03)
    lo, hi = percentile_ci(means)
    assert (lo, hi) == (0.0, 1.0)


def test_overall_weighs_angles_by_their_mean_role_weight(data):
    # with the overlay, summed over the 7 roles: TR 3/4 (GD) + 1/4 (MS) + 1/3 (ED) = 4/3, LI 1/4 (SA) + 1/3 (IL)
    # + 1/3 (PH) = 11/12, CSE 1/4 (GD) + 1/4 (SA) + 1/3 (ED) = 5/6; renormalised over the angles a model has
    overall = data.overall.set_index("model")
    assert overall.loc["A", "overall"] == pytest.approx((4 / 3 * 70 + 11 / 12 * 30 + 5 / 6 * 50) / (4 / 3 + 11 / 12 + 5 / 6))
    assert overall.loc["B", "overall"] == pytest.approx((4 / 3 * 140 / 3 + 11 / 12 * 85 + 5 / 6 * 60) / (4 / 3 + 11 / 12 + 5 / 6))
    assert overall.loc["C", "overall"] == pytest.approx((4 / 3 * 50 + 5 / 6 * 30) / (4 / 3 + 5 / 6))
    assert overall.loc["C", "covered_weight"] == pytest.approx((4 / 3 + 5 / 6) / 7)
    assert list(data.overall["model"]) == ["B", "A", "C"]


def test_core_hard_drop(data):
    o = data.overall.set_index("model")
    assert data.has_sets
    assert (o.loc["A", "core"], o.loc["A", "hard"], o.loc["A", "drop_pct"]) == pytest.approx((80.0, 50.0, 37.5))
    assert (o.loc["B", "core"], o.loc["B", "hard"], o.loc["B", "drop_pct"]) == pytest.approx((50.0, 40.0, 20.0))
    assert o.loc["C", "drop_pct"] == pytest.approx(0.0)


def test_role_weighted_scores(data):
    roles = data.role_scores.set_index(["role", "model"])
    # ED mask TR, CSE, PSC (uniform): PSC unscored, weights renormalised over TR and CSE
    assert roles.loc[("ED", "A"), "score"] == pytest.approx(60.0)
    assert roles.loc[("ED", "B"), "score"] == pytest.approx((140 / 3 + 60) / 2)
    assert roles.loc[("ED", "A"), "covered_weight"] == pytest.approx(2 / 3)
    assert roles.loc[("ED", "A"), "angles_missing"] == "PSC"
    # GD from the overlay: TR 3, CSE 1, the rest of its mask 0 -> fully covered (zero-weight angles are not 'missing')
    assert roles.loc[("GD", "A"), "score"] == pytest.approx(0.75 * 70 + 0.25 * 50)
    assert roles.loc[("GD", "B"), "score"] == pytest.approx(0.75 * 140 / 3 + 0.25 * 60)
    assert not roles.loc[("GD", "A"), "partial"] and roles.loc[("GD", "A"), "covered_weight"] == pytest.approx(1.0)
    # PH needs LI: C has none, so C has no PH score
    assert math.isnan(roles.loc[("PH", "C"), "score"]) and roles.loc[("PH", "B"), "rank"] == 1
    assert roles.loc[("ED", "A"), ["ci_low", "ci_high"]].isna().all()   # its cells hold 1 to 3 images


def test_rankings_note_where_role_differs(data):
    joined = " ".join(data.ranking_notes)
    assert "Role ED (Educator/Science Communicator): ranking differs from overall (A > B > C vs overall B > A > C)" in joined
    assert "best for ED is A, not the overall leader B" in joined
    assert not any(n.startswith("Role PH") for n in data.ranking_notes)  # B > A, same order as overall


def test_missing_angles_are_stated(data):
    notes = " ".join(data.notes)
    assert "Angles not in this run:" in notes and "CPA (Character Portrayal)" in notes
    assert "Model C has no score for LI" in notes
    assert "Role GA (Game & Virtual-Production Artist): none of its weighted angles (PSC, CPA, MA) were scored" in notes
    assert "1 row(s) ended in error and 1 were skipped" in notes
    assert "Metrics other than the angle scores (TR_char)" in notes
    reasons = data.skip_reasons
    assert set(reasons["reason"]) == {"feature 'ocr' failed: boom", "missing weight depth"}


def test_without_sets_core_hard_is_absent(tmp_path):
    rows = [row("A", "p1", "TR", 0.5), row("B", "p1", "TR", 0.7)]
    data = build_report_data(read_scores(write_run(tmp_path, rows)), Ontology.load(), resamples=200)
    assert not data.has_sets and "core" not in data.overall.columns
    assert any("no set=core|hard" in n for n in data.notes)


def test_equal_scores_are_not_a_ranking_difference(tmp_path):
    # X and Y tie on TR and on overall; a sort by name must not be read as a role reordering
    rows = [row("Y", "t", "TR", 0.6), row("X", "t", "TR", 0.6), row("Y", "l", "LI", 0.6), row("X", "l", "LI", 0.6)]
    data = build_report_data(read_scores(write_run(tmp_path, rows)), Ontology.load(), resamples=100)
    assert data.ranking_notes == []


def test_a_model_with_only_errors_keeps_the_role_notes_consistent(tmp_path):
    # "good" scores TR and CSE, "partial" TR only, "broken" nothing: the role note must describe what was scored
    rows = [row("good", "t", "TR", 0.6), row("good", "c", "CSE", 0.5), row("partial", "t", "TR", 0.4),
            row("broken", "t", "TR", None, status="error", error="image: empty file (0 bytes)")]
    data = build_report_data(read_scores(write_run(tmp_path, rows)), Ontology.load(), resamples=100)
    gd = next(n for n in data.notes if n.startswith("Role GD "))
    assert gd == "Role GD (Graphic Designer): partial — scored on 50% of its weight; missing MA, SF."  # TR and CSE were scored
    assert any(n.startswith("Model broken has no score for TR, CSE") for n in data.notes)
    assert any(n.startswith("Model partial has no score for CSE") for n in data.notes)


def _role_notes(tmp_path, rows) -> dict[str, str]:
    data = build_report_data(read_scores(write_run(tmp_path, rows)), Ontology.load(), resamples=100)
    return {n.split(" ")[1]: n for n in data.notes if n.startswith("Role ")}


def test_a_role_fully_scored_by_one_model_is_not_partial_because_another_has_only_errors(tmp_path):
    # ED = TR, CSE, PSC: "good" has all three; "broken" only error rows; "weak" TR only
    rows = [row("good", "t", "TR", 0.6), row("good", "c", "CSE", 0.5), row("good", "p", "PSC", 0.7),
            row("broken", "t", "TR", None, status="error", error="image: empty file (0 bytes)"),
            row("broken", "p", "PSC", None, status="error", error="image: empty file (0 bytes)"),
            row("weak", "t", "TR", 0.3)]
    notes = _role_notes(tmp_path, rows)
    assert "ED" not in notes  # covered on 100% by "good"; broken and weak have their own model notes
    assert notes["GD"] == "Role GD (Graphic Designer): partial — scored on 50% of its weight; missing MA, SF."
    assert not any(n.endswith("missing .") for n in notes.values())


def test_a_role_that_models_cover_differently_names_each_models_share(tmp_path):
    # X has TR and CSE, Y has TR and PSC: both 2/3 of ED, and no angle is missing for both
    rows = [row("X", "t", "TR", 0.6), row("X", "c", "CSE", 0.5), row("Y", "t", "TR", 0.4), row("Y", "p", "PSC", 0.4)]
    notes = _role_notes(tmp_path, rows)
    assert notes["ED"] == "Role ED (Educator/Science Communicator): partial — no model is scored on all of its weight: X on 67% (missing PSC), Y on 67% (missing CSE)."


def test_an_output_folder_that_cannot_be_written_is_a_clear_refusal(tmp_path):
    from typer.testing import CliRunner

    from vistar.cli import app

    run = write_run(tmp_path / "run", [row("A", "p", "TR", 0.5)])
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(app, ["report", str(run), "--resamples", "100", "--out", str(tmp_path / "file" / "r")])
    assert result.exit_code == 2 and "Not a directory" in result.output and "Traceback" not in result.output


def test_the_same_rows_in_another_stored_order_give_the_same_report(scores):
    """A resumed run stores its rows in another order than a clean run: the CIs must not depend on it."""
    ontology = Ontology.load()
    first = build_report_data(scores, ontology, seed=3, resamples=200)
    for shuffle_seed in (1, 2):
        shuffled = scores.sample(frac=1.0, random_state=shuffle_seed).reset_index(drop=True)
        again = build_report_data(shuffled, ontology, seed=3, resamples=200)
        for name in ("angle_scores", "overall", "role_scores"):
            assert getattr(again, name).equals(getattr(first, name)), name
        assert again.notes == first.notes and again.skip_reasons.equals(first.skip_reasons)


def test_core_and_hard_on_no_common_angle_are_left_empty(tmp_path):
    """A's core prompts are TR, its hard prompts LI: a Core from TR and a Hard from LI would compare different angles."""
    rows = [row("A", "c1", "TR", 0.9, set_="core"), row("A", "h1", "LI", 0.3, set_="hard"),
            row("B", "c1", "TR", 0.8, set_="core"), row("B", "h1", "TR", 0.6, set_="hard"),
            row("C", "c1", "TR", 0.7, set_="core")]
    data = build_report_data(read_scores(write_run(tmp_path, rows)), Ontology.load(), resamples=50)
    o = data.overall.set_index("model")
    assert o.loc["A", ["core", "hard", "drop_pct"]].isna().all() and o.loc["A", "set_angles"] == ""
    assert (o.loc["B", "core"], o.loc["B", "hard"], o.loc["B", "drop_pct"]) == pytest.approx((80.0, 60.0, 25.0))
    assert o.loc["C", "core"] == pytest.approx(70.0) and o.loc[["C"], ["hard", "drop_pct"]].isna().all().all()  # one set
    assert ("Model A: its core prompts (TR) and hard prompts (LI) share no weighted angle: Core, Hard and Drop are left "
            "empty (they would compare different angles).") in data.notes
    assert not any(n.startswith(("Model B:", "Model C:")) for n in data.notes)
