"""GC validity set and GC's experimental status: AUC against hand-counted pairs, corruptions that change only
what they say, GC's default weight 0 in every role and the report note that says why."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.scores_builder import row, write_run
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


@pytest.mark.parametrize("seed, axis", [(1, 0), (0, 1)])
def test_stretched_band_is_one_band_filled_by_its_own_middle_stretched(seed, axis):
    ramp = np.repeat(np.repeat(np.arange(200, dtype=np.uint8)[:, None], 100, 1)[..., None], 3, 2)   # value = row
    image = ramp if axis == 0 else np.ascontiguousarray(ramp.transpose(1, 0, 2))
    out = gc.stretched_band(image, np.random.default_rng(seed)).astype(int)
    out = out if axis == 0 else out.transpose(1, 0, 2)
    rows = np.flatnonzero((out != ramp).any(axis=(1, 2)))
    # one band: every row in it changed but those the stretch maps onto themselves (around its middle)
    assert rows.size and rows.size >= (rows[-1] - rows[0] + 1) - 3
    band = out[rows[0] - 1:rows[-1] + 2, 0, 0]        # with one unchanged row each side
    assert 0.1 * 200 - 2 <= len(band) - 2 <= 0.25 * 200 + 2 and (np.diff(band[1:-1]) >= 0).all()
    span = band[-2] - band[1]                           # the middle 1/1.5-1/3 of the band, stretched over it
    assert (len(band) - 2) / 3 - 2 <= span <= (len(band) - 2) / 1.5 + 2


@pytest.fixture
def random_padim(monkeypatch):
    """PaDiM fitted on three noise images with a random-initialised Lite0: the sets' plumbing without downloads."""
    torch = pytest.importorskip("torch")
    from vistar.features.efficientnet_lite import EfficientNetLite0
    from vistar.features.padim import LITE0, Backbone, BackboneConfig, fit_stats

    torch.manual_seed(0)
    backbone = Backbone(None, BackboneConfig(input_size=64, channels=16, pool=2, model=LITE0), net=EfficientNetLite0())
    refs = [np.random.default_rng(k).integers(0, 256, (64, 64, 3), dtype=np.uint8) for k in range(3)]
    monkeypatch.setattr(gc, "fitted_padim", lambda: (backbone, fit_stats(backbone(refs), backbone)))
    gc._clean_cues.cache_clear()
    yield
    gc._clean_cues.cache_clear()


@pytest.mark.slow
def test_a_set_returns_one_gc_row_whose_met_follows_the_goal(random_padim):
    (result,) = gc.SETS["swirl"](4, 5)
    assert (result.angle, result.set, result.n, result.goal) == ("GC", "swirl", 4, ">= 0.75")
    assert 0 <= result.value <= 1 and result.met == (result.value >= 0.75)
    assert "PaDiM cue alone" in result.note
    assert gc.SETS["swirl"](4, 5) == [result]  # same seed, same crops and corruptions, same row


def test_the_goal_is_met_by_the_raw_auc_not_its_rounding(monkeypatch):
    # an AUC of 0.7495 shows as 0.75 but falls short of the goal 0.75
    monkeypatch.setattr(gc, "crops", lambda n, seed, split: [("flat", np.zeros((8, 8, 3), np.uint8))] * n)
    monkeypatch.setattr(gc, "fitted_padim", lambda: None)
    monkeypatch.setattr(gc, "cues", lambda image, params, padim: {"padim": 0.5, "edges": 0.5})
    monkeypatch.setattr(gc, "roc_auc", lambda clean, corrupted: 0.7495)
    gc._clean_cues.cache_clear()
    (result,) = gc.SETS["swirl"](2, 0)
    gc._clean_cues.cache_clear()
    assert result.value == 0.7495 and not result.met


def test_validation_crops_are_a_new_draw_of_other_photos_than_tuning():
    assert not set(gc.TUNING) & set(gc.VALIDATION)
    tuning, validation = gc.crops(4, 0, "tuning"), gc.crops(4, 0, "validation")
    assert {name for name, _ in tuning} <= set(gc.TUNING) and {name for name, _ in validation} <= set(gc.VALIDATION)


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
