"""`calibrate()` on hand-built runs: what it refuses, what it leaves out, and how it keys its units."""
from __future__ import annotations

import itertools
import math
import shutil

import pandas as pd
import pytest

from tests.support.scores_builder import TWO_ANGLE_JUDGMENTS, row, two_angle_rows, write_run
from vistar.calibration import DuplicateScores, NothingUsable, calibrate
from vistar.engine.store import ResultStore


def pairs_file(path, rows: list[tuple], columns=("image_a", "image_b", "preferred", "rater", "angle")):
    pd.DataFrame(rows, columns=list(columns)[:len(rows[0])]).to_csv(path, index=False)
    return path


def test_a_file_no_metric_can_use_is_refused_with_the_reasons(tmp_path):
    run = write_run(tmp_path / "run", [row("A", "p", "TR", 0.9), row("B", "p", "TR", 0.2),
                                       row("A", "q", "TR", None, status="error", error="unreadable"), row("B", "q", "TR", 0.5)])
    pairs = pairs_file(tmp_path / "pairs.csv", [("A/q.png", "B/q.png", "a", "r1", None), ("A/p.png", "B/p.png", "a", "r1", "li"),
                                                ("A/p.png", "Z/p.png", "b", "r1", None)])
    with pytest.raises(NothingUsable) as err:
        calibrate(run, pairs, resamples=100)
    said = str(err.value)
    assert "no usable judgment" in said
    assert f"{pairs}:2: no metric has an ok score for both images; not used" in said
    assert f"{pairs}:3: angle 'li' is not an angle of this run (TR); not used" in said
    assert f"{pairs}:4: image(s) not in this run: Z/p.png" in said


@pytest.fixture
def three_models(tmp_path):
    """TR scored for A and B on p and q; C's image errored, so judgments with C are unusable."""
    rows = [row(m, pid, "TR", s) for m, pid, s in (("A", "p", 0.9), ("B", "p", 0.2), ("A", "q", 0.1), ("B", "q", 0.6))]
    rows.append(row("C", "p", "TR", None, status="error", error="unreadable"))
    return write_run(tmp_path / "run", rows)


def test_unusable_judgments_count_nowhere(three_models, tmp_path):
    """The raters agree on every usable pair (α = 1) and disagree on the unusable A–C pair; C never wins or loses."""
    rows = []
    for rater in ("r1", "r2"):
        rows += [("A/p.png", "B/p.png", "a", rater), ("A/q.png", "B/q.png", "b", rater)]
    rows += [("A/p.png", "C/p.png", "a", "r1"), ("A/p.png", "C/p.png", "b", "r2")]
    result = calibrate(three_models, pairs_file(tmp_path / "pairs.csv", rows), resamples=100)
    assert result.n_judgments == 4 and result.metrics["judgments"].tolist() == [4]
    assert result.agreement["units"] == 2 and result.agreement["alpha_nominal"] == pytest.approx(1.0)
    assert list(result.bradley_terry["model"]) == ["A", "B"] or list(result.bradley_terry["model"]) == ["B", "A"]
    assert sum("no metric has an ok score" in p for p in result.problems) == 2


def test_alpha_has_one_unit_per_pair_angle_and_role():
    """Two raters answer the same two questions (TR and LI) about each of two pairs, identically, but list their
    rows in a different order. Keyed by image pair only, each rater's last row would win and they would seem to
    disagree; per (pair, angle, role) unit they agree perfectly."""
    from vistar.calibration.calibrate import rater_agreement

    r1 = [("x", "y", 1, "TR"), ("x", "y", -1, "LI"), ("u", "v", -1, "TR"), ("u", "v", 1, "LI")]
    r2 = list(reversed(r1))
    votes = pd.DataFrame([(a, b, h, "r1", ang, None) for a, b, h, ang in r1] + [(a, b, h, "r2", ang, None) for a, b, h, ang in r2],
                         columns=["image_a", "image_b", "h", "rater", "angle", "role"])
    agreement = rater_agreement(votes)
    assert agreement["units"] == 4 and agreement["alpha_nominal"] == 1.0 and agreement["alpha_ordinal"] == 1.0
    by_role = votes.assign(angle=None, role=votes["angle"].map({"TR": "GD", "LI": "ED"}))  # "better for which role"
    assert rater_agreement(by_role)["alpha_nominal"] == 1.0


def test_alpha_units_match_the_krippendorff_package():
    """Random votes of 3 raters on 12 pairs × 2 angles, some missing, each written in a random column order:
    α equals the `krippendorff` package's on the raters × (pair, angle) matrix built independently."""
    import krippendorff
    import numpy as np

    from vistar.calibration.calibrate import rater_agreement

    rng = np.random.default_rng(5)
    truth = rng.choice([-1, 0, 1], (12, 2))
    matrix = np.full((3, 24), np.nan)
    votes = []
    for r in range(3):
        for pair, angle in itertools.product(range(12), range(2)):
            if rng.random() < 0.2:
                continue  # this rater skipped the question
            h = truth[pair, angle] if rng.random() < 0.7 else rng.choice([-1, 0, 1])
            matrix[r, pair * 2 + angle] = h
            a, b = f"m1/p{pair}.png", f"m2/p{pair}.png"
            votes.append((b, a, -h) if rng.random() < 0.5 else (a, b, h))
            votes[-1] += (f"r{r}", ["TR", "LI"][angle], None)
    got = rater_agreement(pd.DataFrame(votes, columns=["image_a", "image_b", "h", "rater", "angle", "role"]))
    for level in ("nominal", "ordinal"):
        ref = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level, value_domain=[-1, 0, 1])
        assert got[f"alpha_{level}"] == pytest.approx(ref, abs=1e-12)


def test_two_angles_and_case_insensitive_names_through_calibrate(tmp_path):
    """The same, end to end: TR and LI scored on two pairs; r2 writes the angle names in lower case."""
    run = write_run(tmp_path / "run", two_angle_rows())
    r1 = TWO_ANGLE_JUDGMENTS
    r2 = [(a, b, p, "r2", angle.lower()) for a, b, p, _, angle in reversed(r1)]
    result = calibrate(run, pairs_file(tmp_path / "pairs.csv", r1 + r2), resamples=100)
    assert result.problems == []
    assert result.agreement["alpha_nominal"] == 1.0
    table = result.metrics.set_index("metric")
    assert table.loc["TR", "judgments"] == 4 and table.loc["LI", "judgments"] == 4
    assert table.loc["TR", "ppa"] == 1.0 and table.loc["LI", "ppa"] == 1.0


def test_metric_bradley_terry_covers_only_the_models_it_scored(tmp_path):
    """TR scored A, B and C; LI only A and B. LI's column has no strength (and no rank) for C."""
    rows = []
    for i in range(4):
        rows += [row("A", f"p{i}", "TR", 0.9), row("B", f"p{i}", "TR", 0.5), row("C", f"p{i}", "TR", 0.1)]
        rows += [row("A", f"p{i}", "LI", 0.3), row("B", f"p{i}", "LI", 0.6)]
    run = write_run(tmp_path / "run", rows)
    judged = [(f"{a}/p{i}.png", f"{b}/p{i}.png", "a") for i in range(4) for a, b in (("A", "B"), ("B", "C"), ("A", "C"))]
    judged += [(f"B/p{i}.png", f"A/p{i}.png", "a") for i in range(2)]  # A does not win everything
    result = calibrate(run, pairs_file(tmp_path / "pairs.csv", judged, ("image_a", "image_b", "preferred")), resamples=100)
    bt = result.bradley_terry.set_index("model")
    assert set(bt.index) == {"A", "B", "C"}
    assert math.isnan(bt.loc["C", "LI"]) and pd.isna(bt.loc["C", "rank_LI"])
    assert bt.loc["A", "LI"] == pytest.approx(-bt.loc["B", "LI"]) and bt.loc["B", "LI"] > 0  # LI prefers B; mean 0 over A, B
    assert bt.loc["A", "rank_TR"] == 1 and bt.loc["C", "rank_TR"] == 3
    assert any(w.startswith("Bradley–Terry from metric LI: no maximum-likelihood strengths exist (B never lost")
               for w in result.warnings)


def _duplicated_run(path, same_shard: bool):
    """A/p.png scored for TR twice (as prompts p and p2): 0.9 first, 0.1 later. B/p.png scores 0.5."""
    first, later = row("A", "p", "TR", 0.9), row("A", "p2", "TR", 0.1)
    later["image"] = first["image"]
    run = write_run(path, [row("B", "p", "TR", 0.5), first] + ([later] if same_shard else []))
    if not same_shard:
        ResultStore(run).write([later])
    return run


def test_several_ok_rows_for_one_image_and_metric(tmp_path):
    run = _duplicated_run(tmp_path / "run", same_shard=False)
    pairs = pairs_file(tmp_path / "pairs.csv", [("A/p.png", "B/p.png", "a")], ("image_a", "image_b", "preferred"))
    with pytest.raises(DuplicateScores, match=r"A/p.png TR \(model A prompt p sample 0, model A prompt p2 sample 0\)"):
        calibrate(run, pairs, resamples=100)
    latest = calibrate(run, pairs, resamples=100, dedupe="latest")
    assert latest.metrics.set_index("metric").loc["TR", "ppa"] == 0.0  # the later 0.1 < 0.5, whatever the row order
    together = _duplicated_run(tmp_path / "run2", same_shard=True)
    with pytest.raises(DuplicateScores, match="cannot order rows written in the same shard"):
        calibrate(together, pairs, resamples=100, dedupe="latest")


def test_small_samples_get_no_interval_and_a_warning(three_models, tmp_path):
    result = calibrate(three_models, pairs_file(tmp_path / "pairs.csv", [("A/p.png", "B/p.png", "a"), ("A/q.png", "B/q.png", "b")],
                                                ("image_a", "image_b", "preferred")), resamples=100)
    tr = result.metrics.set_index("metric").loc["TR"]
    assert tr["ppa"] == 1.0 and math.isnan(tr["ppa_ci_low"]) and math.isnan(tr["tau_b_ci_high"])
    assert "metric TR: no ppa/acc23/tau_b interval: 2 independent unit(s), fewer than 10: too few for an interval" in result.warnings


def test_foreign_files_in_the_scores_folder_are_ignored_with_a_note(three_models, tmp_path):
    folder = ResultStore(three_models, writable=False).dir
    (shard,) = folder.glob("part-*.parquet")
    shutil.copy(shard, folder / "part-my copy.parquet")  # a hand-made name: would double every row if read
    (folder / "part-notes.parquet").write_text("not parquet at all")
    pairs = pairs_file(tmp_path / "pairs.csv", [("A/p.png", "B/p.png", "a")], ("image_a", "image_b", "preferred"))
    result = calibrate(three_models, pairs, resamples=100)
    assert result.n_judgments == 1
    assert any("ignored part-my copy.parquet in the scores folder" in w for w in result.warnings)
    assert any("ignored part-notes.parquet" in w for w in result.warnings)
