"""LI's joint light fit on hand-made features: merged and cut shadows, and shadows half hidden behind objects."""
import math
from dataclasses import replace

import numpy as np
import pytest

from tests.support.object_masks import instances
from vistar.api import ShadowMap
from vistar.engine.params import metric_params
from vistar.metrics.li import METRIC, read_light
from vistar.metrics.light_fit import fit_light, predicted_shadow
from vistar.metrics.light_geometry import SolidModel, angle_between, solid_model
from vistar.ontology import Ontology
from vistar.synth.lighting import Solid, render
from vistar.validity.li import light_vector

PARAMS = metric_params(Ontology.load(), "LI")


def _azel(v):
    return math.degrees(math.atan2(v[0], v[2])), math.degrees(math.asin(v[1]))


def test_a_post_in_its_neighbours_shadow_cuts_that_shadow_but_not_the_fit():
    # two 12x60 posts on the same ground row, B standing in A's shadow; light from the left at about 50°:
    # post height on the ground scale (60 - 12 sin φ)/cos φ ≈ 65 px, so each shadow runs ≈ 54 px past the
    # footprint edge (as in test_li_metric). A's shadow is visible only up to B, which hides the rest.
    h, w = 200, 300
    a, b = np.zeros((h, w), bool), np.zeros((h, w), bool)
    a[60:120, 40:52] = True
    b[60:120, 80:92] = True
    shadow = np.zeros((h, w), bool)
    shadow[115:119, 52:80] = True        # A's shadow, cut by B
    shadow[115:119, 92:150] = True       # B's shadow (and what is left of A's), 58 px
    reading = read_light(instances([a, b]), shadow, PARAMS)
    by_object = {p["object"]: p for p in reading.pairs}
    # each pair alone: the split of the merged shadow hands A a cut piece, so A reads a high sun
    assert by_object[0]["tier"] == "shares a shadow with another object"
    assert by_object[0]["elevation_deg"] > 65
    azimuth, elevation = _azel(reading.vector)
    assert azimuth == pytest.approx(-90, abs=5) and elevation == pytest.approx(50, abs=6)


def test_shadows_hidden_behind_their_objects_still_give_the_direction():
    # rendered (ray-cast, exact shadows): light from the front right, 35° off the camera, 30° high; each
    # shadow runs up the image behind its solid, which hides its base and often its tip
    solids = (Solid("cylinder", (-0.6, 0.1), (0.3, 1.0), (0.8, 0.3, 0.3)),
              Solid("box", (0.7, -0.2), (0.28, 0.3, 0.9, 0.4), (0.3, 0.5, 0.8)))
    scene = render(solids, light_vector(35, 30), pitch_deg=35)      # the assumed pitch: no horizon in view
    reading = read_light(scene.instances, scene.shadow, PARAMS)
    azimuth, elevation = _azel(reading.vector)
    # the azimuth comes from the visible sides of the shadows; their hidden length leaves the elevation looser
    assert azimuth == pytest.approx(35, abs=5) and math.degrees(angle_between(reading.vector, scene.light)) < 12
    result = METRIC.fn({"instances": scene.instances, "shadows": ShadowMap(scene.shadow, "exact")},
                       {"light": list(scene.light)}, PARAMS, None)
    assert result.status == "ok" and result.details["fit"]["iou"] > 0.5


def test_ball_shadow_is_an_ellipse_from_the_contact_point():
    # a ball of radius 10 px seen from straight above (sin φ = 1), light from the right at 45°: the shadow's
    # ellipse is centred r·cot 45° = 10 px left of the contact point, semi-axes r/sin 45° = 14.1 along, 10 across,
    # so it reaches 4.1 px past the contact point towards the light
    ball = SolidModel((50.0, 50.0), 10.0, 20.0, 1.0, True)
    px = np.array([50 - 10 - 14.0, 50 - 10 - 14.3, 50 - 10.0, 50 - 10.0, 50 + 4.0, 50 + 4.3])
    py = np.array([50.0, 50.0, 50 + 9.9, 50 + 10.2, 50.0, 50.0])
    inside = predicted_shadow([ball], math.radians(90), math.radians(45), px, py)
    assert inside.tolist() == [True, False, True, False, True, False]


def test_fit_needs_models_and_shadow_pixels():
    mask = np.zeros((50, 50), bool)
    mask[10:40, 20:26] = True
    model = solid_model(mask, 35.0)
    assert model is not None and not model.round
    assert fit_light([model], np.zeros_like(mask), mask) is None
    assert fit_light([], mask, mask) is None


def test_objects_covering_every_shadow_pixel_are_a_skip_not_a_crash():
    # a shadow mask that lies entirely under the objects (a detector that ignored the masks): nothing is
    # ground, so nothing can be compared
    mask = np.zeros((60, 80), bool)
    mask[10:50, 10:70] = True
    shadow = np.zeros_like(mask)
    shadow[45:50, 20:60] = True
    model = solid_model(mask, 35.0)
    assert fit_light([model], shadow, mask) is None
    result = METRIC.fn({"instances": instances([mask]), "shadows": ShadowMap(shadow, "hand")},
                       {"light": "light from the upper left"}, PARAMS, None)
    assert result.status == "skipped" and result.score is None


def _post_and_shadow(shadow_box):
    """One 12x60 post and a hand-painted shadow region (rows, cols) right of it, on a 200x300 image."""
    post, shadow = np.zeros((200, 300), bool), np.zeros((200, 300), bool)
    post[60:120, 40:52] = True
    shadow[shadow_box] = True
    return {"instances": instances([post]), "shadows": ShadowMap(shadow, "hand")}


def test_a_fit_that_explains_little_of_the_shadow_is_low_confidence_with_the_reason():
    # a 130x130 shadow beside a post 12 px wide: any predicted shadow is a strip at most 12 px across, so it
    # covers at most 12 x 130·√2 ≈ 2 200 of the 16 900 shadow pixels (IoU ≤ 0.13), whatever the light
    features = _post_and_shadow(np.s_[60:190, 52:182])
    result = METRIC.fn(features, {"light": "light from the upper left"}, PARAMS, None)
    assert result.status == "skipped" and result.score is None
    assert result.details["fit"]["iou"] < 0.13
    assert result.error.startswith("low confidence") and "min_fit_iou" in result.error
    assert "tentative_estimate" in result.details
    # without a minimum the same fit is scored: the minimum is what skipped it
    unguarded = METRIC.fn(features, {"light": "light from the upper left"}, replace(PARAMS, min_fit_iou=0.0), None)
    assert unguarded.status == "ok"


def test_a_fit_that_matches_the_shadow_is_scored_as_without_a_minimum():
    # the post's shadow as a thin strip along the ground to the right: light from the left, as asked
    features = _post_and_shadow(np.s_[115:119, 52:110])
    result = METRIC.fn(features, {"light": "light from the upper left"}, PARAMS, None)
    unguarded = METRIC.fn(features, {"light": "light from the upper left"}, replace(PARAMS, min_fit_iou=0.0), None)
    assert result.status == "ok" and result.details["fit"]["iou"] >= PARAMS.min_fit_iou
    assert result.score == unguarded.score and result.details["estimate"]["azimuth_deg"] == pytest.approx(-90, abs=5)
