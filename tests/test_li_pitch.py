"""LI camera pitch measured in the image (the horizon, else the assumed pitch) and the low-confidence rule
for light from the front, on rendered scenes whose pitch and light are known."""
import math
from dataclasses import replace

import pytest

from vistar.api import ShadowMap
from vistar.engine.params import metric_params
from vistar.features.thumbnail import resize_longest
from vistar.metrics.camera_pitch import estimate_pitch, horizon_row
from vistar.metrics.li import METRIC, read_light
from vistar.metrics.light_geometry import angle_between
from vistar.ontology import Ontology
from vistar.synth.lighting import Solid, render
from vistar.validity.li import light_vector, run_scenes

PARAMS = metric_params(Ontology.load(), "LI")
POST = Solid("cylinder", (0.4, 0.2), (0.3, 1.0), (0.8, 0.3, 0.3))
BOX = Solid("box", (-0.9, -0.3), (0.3, 0.3, 0.9, 0.7), (0.3, 0.5, 0.8))


def test_horizon_row_matches_the_camera_geometry():
    # pitch 12°, vertical fov 50°, 240 rows: the horizon is f·tan 12° above the centre row, f = 120 / tan 25°
    scene = render((POST,), light_vector(90, 40), pitch_deg=12, fov_deg=50)
    expected = 120 - 120 / math.tan(math.radians(25)) * math.tan(math.radians(12))
    assert horizon_row(scene.image, scene.instances.masks.any(0)) == pytest.approx(expected, abs=1.0)
    high = render((POST,), light_vector(90, 40), pitch_deg=40, fov_deg=50)     # horizon above the frame
    assert horizon_row(high.image, high.instances.masks.any(0)) is None


def test_unknown_pitch_is_measured_and_recorded_and_the_fallback_is_named():
    # a low camera (15°): assuming 35° reads every ground step about twice too short
    scene = render((POST, BOX), light_vector(120, 35), pitch_deg=15, fov_deg=50)
    reading = read_light(scene.instances, scene.shadow, PARAMS, resize_longest(scene.image, 256))
    assert reading.pitch.source == "horizon" and reading.pitch.pitch_deg == pytest.approx(15, abs=2)
    # without the image (no thumbnail feature), or with no horizon in view, the assumption is used and named
    no_image = read_light(scene.instances, scene.shadow, PARAMS)
    assert no_image.pitch.source == "assumed" and no_image.pitch.pitch_deg == PARAMS.camera_pitch_deg
    switched_off = read_light(scene.instances, scene.shadow, replace(PARAMS, use_horizon=False), resize_longest(scene.image, 256))
    assert switched_off.pitch.source == "assumed"
    steep = render((POST, BOX), light_vector(120, 35), pitch_deg=40, fov_deg=50)
    assumed = estimate_pitch(resize_longest(steep.image, 256), list(steep.instances.masks), 240, PARAMS)
    assert assumed.source == "assumed" and assumed.pitch_deg == PARAMS.camera_pitch_deg
    result = METRIC.fn({"instances": steep.instances, "shadows": ShadowMap(steep.shadow, "exact")},
                       {"light": list(steep.light)}, PARAMS, None)
    assert result.details["camera"]["source"] == "assumed"
    measured = METRIC.fn({"instances": scene.instances, "shadows": ShadowMap(scene.shadow, "exact"),
                          "thumbnail": resize_longest(scene.image, 256)}, {"light": list(scene.light)}, PARAMS, None)
    assert measured.status == "ok" and measured.details["angle_deg"] < 8
    # the same scene read at the assumed 35°: ground steps come out about half as long, the light ~10° off
    assumed = math.degrees(angle_between(read_light(scene.instances, scene.shadow, PARAMS).vector, scene.light))
    assert assumed > measured.details["angle_deg"] + 4
    assert measured.details["camera"] == {"pitch_deg": pytest.approx(15, abs=2), "source": "horizon",
                                          "assumed_vertical_fov_deg": 50.0}


def test_frontal_light_is_a_low_confidence_skip_with_the_tentative_estimate():
    # light from the camera's side: each shadow falls behind its object, where the object hides its tip
    scene = render((POST, BOX), light_vector(5, 40), pitch_deg=25, fov_deg=50)
    result = METRIC.fn({"instances": scene.instances, "shadows": ShadowMap(scene.shadow, "exact"),
                        "thumbnail": resize_longest(scene.image, 256)}, {"light": list(scene.light)}, PARAMS, None)
    assert result.status == "skipped" and result.score is None
    assert result.error.startswith("low confidence") and "tentative_estimate" in result.details
    side = render((POST, BOX), light_vector(100, 40), pitch_deg=25, fov_deg=50)
    result = METRIC.fn({"instances": side.instances, "shadows": ShadowMap(side.shadow, "exact")},
                       {"light": list(side.light)}, PARAMS, None)
    assert result.status == "ok" and result.details["angle_deg"] < 20


@pytest.mark.slow
def test_validity_slice_runs_and_reports_every_measure():
    rows = run_scenes(6, 0)
    assert {r.measure for r in rows} >= {"median error (deg), scored", "p90 error (deg), scored", "share of scenes scored"}
    assert all(r.angle == "LI" and r.set == "rendered scenes" for r in rows)
    assert 0 <= rows[2].value <= 1
