"""support_below on hand-made masks (fractions counted by hand) and on rendered scenes whose ground truth says what
the solid stands on; PSC then tells a cube sunk into a block's face from one resting against it."""
import numpy as np
import pytest

from vistar.engine.params import metric_params
from vistar.metrics.psc import METRIC, score_pairs
from vistar.metrics.psc_support import support_below
from vistar.ontology import Ontology
from vistar.synth.scenes import Box, render
from vistar.validity.psc import run_cube

PARAMS = metric_params(Ontology.load(), "PSC")
BLOCK = Box((-0.8, 0.0, -0.8), (0.8, 1.2, 0.8))


def _solid_on(beneath_depth: float, face_columns=slice(0, 10)):
    """A 6-column solid (rows 5-9, columns 2-7, inverse depth 2) over a face filling FACE_COLUMNS below it."""
    solid = np.zeros((20, 10), bool)
    solid[5:10, 2:8] = True
    face = np.zeros_like(solid)
    face[10:, face_columns] = True
    depth = np.full(solid.shape, beneath_depth)
    depth[solid] = 2.0
    return solid, face, depth


def test_a_solid_over_a_face_behind_it_hangs_over_an_occluder_it_does_not():
    assert support_below(*_solid_on(1.0), reach=3, step=0.1) == 0.0    # face behind: held by it
    assert support_below(*_solid_on(2.05), reach=3, step=0.1) == 0.0   # level: the contact itself
    assert support_below(*_solid_on(3.0), reach=3, step=0.1) == 1.0    # face in front hides its foot


def test_columns_count_separately_and_other_surfaces_support_unless_far_behind():
    solid, face, depth = _solid_on(2.0, face_columns=slice(0, 5))     # face under columns 2-4, ground under 5-7
    depth[10:, :5] = 1.0                                               # the face lies behind the solid
    assert support_below(solid, face, depth, reach=3, step=0.1) == 0.5
    depth[10:, 5:] = 1.0                                               # the ground drops away: floating there too
    assert support_below(solid, face, depth, reach=3, step=0.1) == 0.0


def test_image_edge_and_empty_solid():
    solid = np.zeros((6, 6), bool)
    assert support_below(solid, solid, np.zeros((6, 6)), 2, 0.1) == 0.0
    solid[3:, 1:4] = True                                              # runs off the bottom of the image
    assert support_below(solid, np.zeros_like(solid), np.zeros((6, 6)), 2, 0.1) == 1.0


def test_a_column_over_pixels_without_depth_does_not_hang():
    # no face beneath and the ground's depth unknown (NaN): no evidence the solid floats
    solid, face, depth = _solid_on(2.0, face_columns=slice(0, 0))
    depth[10:] = np.nan
    assert support_below(solid, face, depth, reach=3, step=0.1) == 1.0
    depth[10:, 5:] = 1.0                                               # the ground drops away under columns 5-7
    assert support_below(solid, face, depth, reach=3, step=0.1) == 0.5


def _cube(placement: str, r: float = 0.3):
    x, y, z = {"sunk": (0.1, 0.6, -0.8), "resting": (0.1, r, -0.8 - r), "floating": (0.1, 0.7, -0.8 - r - 0.3)}[placement]
    scene = render([BLOCK, Box((x - r, y - r, z - r), (x + r, y + r, z + r))], placement, 96, 128, elevation_deg=20)
    pair = score_pairs(scene.instances, scene.inverse_depth, PARAMS)[0]
    return scene, pair, METRIC.fn({"instances": scene.instances, "depth": scene.inverse_depth}, {}, PARAMS, None).score


def _labels_under_lowest_pixels(scene, index: int) -> np.ndarray:
    mask = scene.labels == index
    cols = np.flatnonzero(mask.any(0))
    lowest = mask.shape[0] - 1 - np.argmax(mask[::-1, cols], axis=0)
    return scene.labels[lowest + 1, cols]


def test_resting_cube_stands_on_the_ground_sunk_cube_hangs_on_the_face():
    resting, rest_pair, rest_score = _cube("resting")
    sunk, sunk_pair, sunk_score = _cube("sunk")
    assert (_labels_under_lowest_pixels(resting, 1) == -1).all()    # ground truth: ground under the resting cube
    assert (_labels_under_lowest_pixels(sunk, 1) == 0).all()        # ... the block's face under the sunk one
    assert rest_pair["support"] == 1.0 and sunk_pair["support"] == 0.0
    floating, float_pair, float_score = _cube("floating")
    assert float_pair["support"] == 0.0                             # hangs in front of the face, touching nothing
    assert sunk_score < rest_score and sunk_score < float_score
    assert float_pair["chaos"] > sunk_pair["chaos"]                 # floating is told apart by its rim step alone


@pytest.mark.slow
def test_cube_validity_slice_separates_sunk_from_resting_and_floating():
    exact, model_like = run_cube(12, 1)                             # validation seeds, not the tuning split
    assert exact.value >= 0.95 and model_like.value >= 0.9, (exact.value, model_like.value)
