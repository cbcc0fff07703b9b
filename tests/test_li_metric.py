"""LI metric and object-shadow association on hand-made features (no model, no image)."""
import numpy as np
import pytest

from tests.support.object_masks import instances
from vistar.api import Instances, ShadowMap
from vistar.engine.params import metric_params
from vistar.metrics.li import METRIC, associate
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(), "LI")


def _scene():
    """Two posts with shadows running to the image right (light from the left), on a 200x300 canvas."""
    h, w = 200, 300
    a, b = np.zeros((h, w), bool), np.zeros((h, w), bool)
    a[60:120, 40:52] = True
    b[80:140, 150:162] = True
    shadow = np.zeros((h, w), bool)
    shadow[115:119, 52:110] = True
    shadow[135:139, 162:220] = True
    return instances([a, b]), shadow


def test_each_shadow_goes_to_the_object_it_touches():
    inst, shadow = _scene()
    pairs = associate(inst, [0, 1], shadow, touch_frac=0.01)
    assert sorted(pairs) == [0, 1]
    assert pairs[0][0].sum() == 4 * 58 and not pairs[0][1]
    assert pairs[0][0][:, 150:].sum() == 0


def test_merged_shadow_is_split_and_marked_contested():
    inst, shadow = _scene()
    shadow[117, 52:162] = True  # a bridge joins the two shadows
    pairs = associate(inst, [0, 1], shadow, touch_frac=0.01)
    assert pairs[0][1] and pairs[1][1]
    assert not (pairs[0][0] & pairs[1][0]).any()


def test_shadows_to_the_right_score_high_for_light_from_the_upper_left_and_low_for_the_right():
    # post height on the ground scale (60 - 12 sin35)/cos35 = 64.8 px; a 50-degree light casts 64.8/tan50 = 54 px
    # beyond the footprint edge, about what the hand-drawn 58 px shadows show
    inst, shadow = _scene()
    feats = {"instances": inst, "shadows": ShadowMap(shadow, "hand")}
    left = METRIC.fn(feats, {"light": "light from the upper left"}, PARAMS, None)
    right = METRIC.fn(feats, {"light": "low light from the right"}, PARAMS, None)
    assert left.status == "ok" and right.status == "ok"
    assert left.score > 0.9 and right.score < 0.2
    assert left.details["estimate"]["elevation_deg"] == pytest.approx(50, abs=5)
    assert left.details["n_pairs"] == 2
    assert left.details["estimate"]["azimuth_deg"] == pytest.approx(-90, abs=5)


def test_no_shadow_is_a_skip_with_the_reason_not_a_zero():
    inst, shadow = _scene()
    res = METRIC.fn({"instances": inst, "shadows": ShadowMap(np.zeros_like(shadow), "hand")},
                    {"light": "light from the upper left"}, PARAMS, None)
    assert res.status == "skipped" and res.score is None and "no object-shadow pair" in res.error
    empty = Instances.empty(200, 300)
    res = METRIC.fn({"instances": empty, "shadows": ShadowMap(shadow, "hand")}, {"light": "light from the upper left"}, PARAMS, None)
    assert res.status == "skipped" and "no salient object" in res.error


def test_unknown_light_phrase_is_an_error_naming_the_anchors():
    inst, shadow = _scene()
    res = METRIC.fn({"instances": inst, "shadows": ShadowMap(shadow, "hand")}, {"light": "candle glow"}, PARAMS, None)
    assert res.status == "error" and "light from the upper left" in res.error


def test_shadow_leaving_the_frame_is_marked_and_keeps_the_azimuth():
    inst, shadow = _scene()
    shadow[135:139, 162:300] = True   # object 1's shadow now runs off the right edge: its length is unknown
    res = METRIC.fn({"instances": inst, "shadows": ShadowMap(shadow, "hand")}, {"light": "low light from the left"}, PARAMS, None)
    tiers = {p["object"]: p["tier"] for p in res.details["pairs"]}
    assert tiers == {0: "clean", 1: "shadow leaves the frame"}
    assert res.details["estimate"]["azimuth_deg"] == pytest.approx(-90, abs=5)
