"""LI geometry on hand-made inputs: anchors, `light=` parsing, score mapping, one object/shadow pair."""
import math

import numpy as np
import pytest

from vistar.engine.params import metric_params
from vistar.metrics.light_geometry import (
    anchors_from_params,
    find_anchor,
    li_score,
    pair_direction,
    parse_light,
    silhouette_fits,
    solid_model,
)
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt
from vistar.prompts_dsl.derive import resolved_controls

ONTO = Ontology.load()
ANCHORS = anchors_from_params(metric_params(ONTO, "LI").anchors)


def test_sixteen_distinct_unit_anchors_above_the_ground():
    assert len(ANCHORS) == 16
    assert len({a.phrase for a in ANCHORS}) == 16
    for a in ANCHORS:
        assert math.isclose(np.linalg.norm(a.vector), 1.0, abs_tol=1e-3)
        assert a.vector[1] > 0  # every anchor casts a shadow on the ground
    # neighbours are >= 28 degrees apart (45 degrees of azimuth at 50 degrees elevation), twice the 15 degree target error
    gaps = [math.degrees(math.acos(np.clip(a.vector @ b.vector, -1, 1))) for i, a in enumerate(ANCHORS) for b in ANCHORS[i + 1:]]
    assert min(gaps) > 28


def test_frame_convention_left_is_negative_x_front_is_positive_z():
    left, _ = parse_light("low light from the left", ANCHORS)
    front, _ = parse_light("low front light", ANCHORS)
    assert left[0] < -0.9 and front[2] > 0.9


def test_longest_phrase_wins_and_spelling_is_normalised():
    assert find_anchor("A vase on a table, light from the Upper-Left front.", ANCHORS).phrase == "light from upper-left front"
    assert find_anchor("a vase, light from the upper left", ANCHORS).phrase == "light from the upper left"
    assert find_anchor("a backlit portrait", ANCHORS).phrase == "low light from the back"
    assert find_anchor("a vase on a table", ANCHORS) is None


def test_parse_light_accepts_phrase_without_prefix_and_vectors():
    v, label = parse_light("upper-left front", ANCHORS)
    assert label == "light from upper-left front"
    v, label = parse_light("0, 2, 0", ANCHORS)
    assert label == "vector" and np.allclose(v, [0, 1, 0])
    v, _ = parse_light([1, 0, 0], ANCHORS)
    assert np.allclose(v, [1, 0, 0])
    with pytest.raises(ValueError, match="anchor"):
        parse_light("moonlight through fog", ANCHORS)
    with pytest.raises(ValueError, match="non-zero"):
        parse_light("0,0,0", ANCHORS)


def test_score_is_linear_in_angle_and_clipped():
    x, y = np.array([1.0, 0, 0]), np.array([0.0, 1, 0])
    assert li_score(x, x) == 1.0
    assert math.isclose(li_score(x, (x + y) / math.sqrt(2)), 0.5, abs_tol=1e-9)
    assert li_score(x, y) == 0.0
    assert li_score(x, -x) == 0.0


def test_pair_direction_hand_computed():
    # object 10 px wide, 50 px tall; shadow: one row to its right at the footprint's level
    obj = np.zeros((120, 100), bool)
    obj[50:100, 10:20] = True
    shadow = np.zeros_like(obj)
    shadow[97, 20:60] = True
    g = pair_direction(solid_model(obj, pitch_deg=30), shadow)
    assert g.shape == "upright"
    # footprint = (15, 100 - 0.5*10*sin30) = (15, 97.5); tip = far pixel x=59 -> ground (44.5, 0)
    assert g.base == pytest.approx((15.0, 97.5))
    height = (50 - 10 * 0.5) / math.cos(math.radians(30))
    assert g.height == pytest.approx(height)
    assert g.length == pytest.approx(44.5 - 5)
    elevation = math.atan2(height, 39.5)
    assert g.vector == pytest.approx([-math.cos(elevation), math.sin(elevation), 0.0], abs=1e-9)


def test_round_object_uses_the_ball_geometry():
    # a disc of radius 20 centred at (50, 60) is a ball's silhouette; shadow: one row to its right at the contact
    yy, xx = np.mgrid[:160, :200] + 0.5
    obj = (xx - 50) ** 2 + (yy - 60) ** 2 <= 20 ** 2
    disc_fit, upright_fit = silhouette_fits(obj, 30)
    assert disc_fit > 0.95 > upright_fit
    shadow = np.zeros_like(obj)
    shadow[77, 70:110] = True
    g = pair_direction(solid_model(obj, pitch_deg=30), shadow)
    assert g.shape == "round"
    # contact = disc centre + r·cos30 down the image; tip = far pixel (109.5, 77.5); ground depth = dy / sin30
    contact_y = 60 + 20 * math.cos(math.radians(30))
    assert g.base == pytest.approx((50.0, contact_y))
    gx, gz = 109.5 - 50, (77.5 - contact_y) / 0.5
    reach = math.hypot(gx, gz)
    assert g.length == pytest.approx(reach) and g.height == pytest.approx(40)
    elevation = 2 * math.atan(20 / reach)      # a ball's shadow tip lies r·cot(e/2) from its contact point
    assert g.vector == pytest.approx([-math.cos(elevation) * gx / reach, math.sin(elevation),
                                      -math.cos(elevation) * gz / reach], abs=1e-9)


def test_shadow_down_the_image_means_light_from_behind():
    obj = np.zeros((200, 100), bool)
    obj[40:100, 45:55] = True
    shadow = np.zeros_like(obj)
    shadow[100:160, 46:54] = True
    v = pair_direction(solid_model(obj, pitch_deg=35), shadow).vector
    assert v[2] < -0.5 and abs(v[0]) < 0.05


def test_li_deriver_fills_light_from_core_and_explicit_control_wins():
    p = parse_prompt('[PH|LI] a red vase, low light from the right {id="x"}')
    assert resolved_controls(p, ONTO)["light"] == "low light from the right"
    p = parse_prompt('[PH|LI] a red vase, low light from the right {light="upper back"}')
    assert resolved_controls(p, ONTO)["light"] == "upper back"
