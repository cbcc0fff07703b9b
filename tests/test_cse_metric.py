"""CSE math on hand-made embeddings with hand-computed answers (no model involved)."""
import math

import numpy as np
import pytest

from vistar.api import ClipEmbeddings, PanelLayout, SubjectEmbeddings, SubjectMasks
from vistar.engine.params import metric_params
from vistar.features.dino_embed import masked_crop
from vistar.features.subject_masks import assign_to_panels, subject_query
from vistar.metrics.cse import METRIC, consistency, coverage, cse_score, derive_shots, linear_map
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt

R2 = 1 / math.sqrt(2)
PANELS = np.array([[1.0, 0.0], [0.0, 1.0]])
SHOTS = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, -1.0]])
# cos(panel, shot): panel 0 → [1, 1/√2, 0]; panel 1 → [0, 1/√2, −1]


def test_linear_map_and_clipscore_default():
    np.testing.assert_allclose(linear_map([-0.2, 0.0, 0.1, 0.4, 0.9], 0.0, 0.4), [0, 0, 0.25, 1, 1])
    np.testing.assert_allclose(linear_map([0.15, 0.25], 0.15, 0.35), [0.0, 0.5])
    with pytest.raises(ValueError, match="hi > lo"):
        linear_map(0.3, 0.4, 0.4)


def test_coverage_hand_computed():
    raw = coverage(PANELS, SHOTS, 0.0, 1.0)
    assert raw["score"] == pytest.approx((1 + R2 + 0) / 3)
    np.testing.assert_array_equal(raw["best_panel"], [0, 0, 0])       # shot 1 ties: the first panel wins
    np.testing.assert_array_equal(raw["best_shot"], [0, 1])
    clipscore = coverage(PANELS, SHOTS, 0.0, 0.4)                      # 2.5·max(cos, 0) clipped to 1
    assert clipscore["score"] == pytest.approx((1 + 1 + 0) / 3)


def test_consistency_uses_only_panels_with_the_subject():
    vectors = np.array([[1.0, 0.0], [-5.0, 3.0], [0.0, 1.0], [1.0, 1.0]])
    con = consistency(vectors, np.array([True, False, True, True]), 0.0, 1.0)
    assert con["k"] == 3
    assert con["score"] == pytest.approx((0 + R2 + R2) / 3)            # pairs (0,2), (0,3), (2,3)
    shifted = consistency(vectors, np.array([True, False, True, True]), 0.2, 0.6)
    assert shifted["score"] == pytest.approx(((0 + 2 * R2) / 3 - 0.2) / 0.4)


@pytest.mark.parametrize("found, expected", [([True, False, False, False], 0.0), ([False] * 4, 0.0),
                                             ([True], 1.0), ([False], 0.0)])
def test_consistency_with_fewer_than_two_subject_panels(found, expected):
    con = consistency(np.ones((len(found), 3)), np.array(found), 0.0, 1.0)
    assert con["score"] == expected and con["mean_cosine"] is None and con["rule"]


def test_cse_is_the_geometric_mean():
    assert cse_score(0.64, 0.25) == pytest.approx(0.4)
    assert cse_score(0.9, 0.0) == 0.0


def _features(found):
    layout = PanelLayout(np.array([[0, 0, 10, 10], [10, 0, 20, 10]]), 1, 2, "detected", "grid")
    clip = ClipEmbeddings(PANELS.astype(np.float32), SHOTS.astype(np.float32), ("wake", "hunt", "sleep"))
    subject = SubjectMasks(np.array(found), np.zeros((2, 4)), np.array([0.8, 0.6]) * found, np.zeros((2, 10, 20), bool),
                           tuple("sam" if f else "" for f in found))
    dino = SubjectEmbeddings(np.array([[1.0, 0.0], [1.0, 1.0]], np.float32), np.array(found))
    return {"panels": layout, "clip_embed": clip, "subject_masks": subject, "dino_embed": dino}


def test_metric_combines_and_explains():
    params = metric_params(Ontology.load(), "CSE")
    assert (params.cov_lo, params.cov_hi) == (0.0, 0.4)
    result = METRIC.fn(_features([True, True]), {"subject": "fox"}, params, None)
    cov, con = 2 / 3, R2                                               # con: one pair, cos 1/√2, con map (0, 1)
    assert result.status == "ok"
    assert result.score == pytest.approx(math.sqrt(cov * con))
    d = result.details
    assert d["cov"] == pytest.approx(cov) and d["con"] == pytest.approx(con)
    assert [p["best_shot_text"] for p in d["per_panel"]] == ["wake", "hunt"]
    assert [s["best_panel"] for s in d["per_shot"]] == [0, 0, 0]
    assert d["subject_panels"] == [0, 1] and d["panel_method"] == "partial" and d["grid"] == "1x2"
    np.testing.assert_allclose(d["similarity"], [[1, 0.7071, 0], [0, 0.7071, -1]], atol=1e-4)
    lonely = METRIC.fn(_features([True, False]), {"subject": "fox"}, params, None)
    assert lonely.score == 0.0 and lonely.details["subject_k"] == 1 and "no pair" in lonely.details["con_rule"]


def test_assign_detections_to_panels():
    panels = np.array([[0, 0, 100, 100], [100, 0, 200, 100], [0, 100, 100, 200]])
    boxes = np.array([[10, 10, 50, 50],      # panel 0, score .5
                      [20, 20, 60, 60],      # panel 0, score .9: wins
                      [90, 10, 130, 50],     # centre x=110 → panel 1, 75 % inside
                      [50, 50, 150, 150],    # centre (100, 100) → panel 1 by centre, but only 25 % inside
                      [60, 160, 300, 190]])  # centre x=180 is outside panel 2
    scores = np.array([0.5, 0.9, 0.4, 0.99, 0.8])
    np.testing.assert_array_equal(assign_to_panels(boxes, scores, panels, 0.5), [1, 2, -1])
    np.testing.assert_array_equal(assign_to_panels(np.zeros((0, 4)), np.zeros(0), panels, 0.5), [-1, -1, -1])


def test_subject_query_and_masked_crop():
    assert subject_query("  The Red   Fox. ") == "the red fox."
    with pytest.raises(ValueError, match="subject"):
        subject_query(" ")
    image = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
    mask = np.zeros((6, 8), bool)
    mask[1:3, 2:6] = True
    mask[1, 2] = False
    crop = masked_crop(image, mask, np.array([1, 2, 3], np.uint8))
    assert crop.shape == (4, 4, 3)                                     # 2×4 box padded to a square
    np.testing.assert_array_equal(crop[0], [[1, 2, 3]] * 4)            # padding row
    np.testing.assert_array_equal(crop[1, 0], [1, 2, 3])               # masked-out pixel
    np.testing.assert_array_equal(crop[1, 1:], image[1, 3:6])
    np.testing.assert_array_equal(crop[2], image[2, 2:6])


def test_shots_derived_from_the_core():
    prompt = parse_prompt("[SA|CSE] Storyboard of a fox: the fox wakes; the fox hunts; the fox sleeps. {subject=\"fox\"}")
    assert derive_shots(prompt) == {"shots": ["the fox wakes", "the fox hunts", "the fox sleeps"]}
    assert derive_shots(parse_prompt("[SA|CSE] A fox: sleeping")) == {}
