"""GC validity set and GC's experimental status: AUC against hand-counted pairs, corruptions that change only
what they say, GC's default weight 0 in every role and the report note that says why."""
from __future__ import annotations

import numpy as np
import pytest

from tests.scores_builder import row, write_run
from vistar.engine.store import read_scores
from vistar.ontology import Ontology
from vistar.report import build_report_data
from vistar.validity import gc


def test_roc_auc_counts_pairs_with_ties_as_half():
    # pairs (clean, corrupted): (1,0) below, (2,0) below, (1,2) above, (2,2) tie -> (1 + 1 + 0 + 0.5) / 4
    assert gc.roc_auc([1.0, 2.0], [0.0, 2.0]) == pytest.approx(0.625)
    assert gc.roc_auc([0.9, 0.8], [0.1, 0.2]) == 1.0 and gc.roc_auc([0.1], [0.9]) == 0.0


@pytest.fixture(scope="module")
def noise_image():
    return np.random.default_rng(7).integers(0, 256, (120, 160, 3), dtype=np.uint8)


@pytest.mark.parametrize("family", sorted(gc.FAMILIES))
def test_corruptions_are_deterministic_and_change_the_image(family, noise_image):
    corrupt = gc.FAMILIES[family]
    first = corrupt(noise_image, np.random.default_rng(3))
    assert first.shape == noise_image.shape and first.dtype == np.uint8
    assert np.array_equal(first, corrupt(noise_image, np.random.default_rng(3)))
    assert (first != noise_image).any(axis=-1).mean() > 0.005


@pytest.mark.parametrize("family, at_most", [
    ("duplicated structure", 24 * 24 / (120 * 160)),  # a square of at most 20 % of the short side (24 px)
    ("texture smearing", np.pi / 4 * 0.3 * 0.3 + 0.02),  # an ellipse within 30 % x 30 %, plus its feathered rim
])
def test_local_corruptions_stay_local(family, at_most, noise_image):
    changed = (gc.FAMILIES[family](noise_image, np.random.default_rng(11)) != noise_image).any(axis=-1).mean()
    assert 0 < changed <= at_most


def test_duplicated_structure_copies_a_region():
    # on noise, a copied square shows as one far offset whose pixels agree far beyond chance
    image = np.random.default_rng(1).integers(0, 256, (100, 100, 3), dtype=np.uint8)
    out = gc.duplicated_structure(image, np.random.default_rng(2)).astype(float)
    changed = np.argwhere((out != image).any(-1))
    (y0, x0), (y1, x1) = changed.min(0), changed.max(0)
    core = out[(y0 + y1) // 2 - 2:(y0 + y1) // 2 + 3, (x0 + x1) // 2 - 2:(x0 + x1) // 2 + 3].ravel()
    best = max(np.corrcoef(core, image[y:y + 5, x:x + 5].astype(float).ravel())[0, 1]
               for y in range(96) for x in range(96))
    assert best > 0.9


def test_a_set_returns_one_gc_row_whose_met_follows_the_goal():
    (result,) = gc.SETS["patch seams"](4, 5)
    assert (result.angle, result.set, result.n, result.goal) == ("GC", "patch seams", 4, ">= 0.80")
    assert 0 <= result.value <= 1 and result.met == (result.value >= 0.80)
    assert gc.SETS["patch seams"](4, 5) == [result]  # same seed, same crops and corruptions, same row


def test_gc_has_weight_zero_in_every_role_by_default_and_the_report_says_why(tmp_path):
    onto = Ontology.load()
    roles = [role for role, angles in onto.mask.items() if "GC" in angles]
    assert roles and all(onto.role_weights(role)["GC"] == 0 for role in roles)
    rows = [row("A", "g", "GC", 0.4, role="PH"), row("A", "l", "LI", 0.8, role="PH")]
    data = build_report_data(read_scores(write_run(tmp_path, rows)), onto, resamples=50)
    note = next(n for n in data.notes if n.startswith("GC (Geometric Consistency) is experimental"))
    assert "ROC-AUC" in note
    ph = data.role_scores[(data.role_scores.role == "PH") & (data.role_scores.model == "A")]
    assert ph["score"].iloc[0] == pytest.approx(80.0)  # LI alone: GC's 40 carries no weight
