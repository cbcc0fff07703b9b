"""rim_height on hand-made masks and planar depth (heights worked out by hand), and PSC on rendered balls resting
on, or sunk into, a block's top face seen from above."""
import numpy as np
import pytest

from vistar.engine.params import metric_params
from vistar.metrics.psc import score_pairs
from vistar.metrics.psc_rest import face_plane, rim_height
from vistar.ontology import Ontology
from vistar.synth.scenes import Box, Sphere, render

PARAMS = metric_params(Ontology.load(), "PSC")
ROWS, COLS = np.mgrid[0:40, 0:40].astype(float)
PLANE = 0.01 * COLS + 0.02 * ROWS + 0.5          # a face seen from above: nearer toward the image bottom


def _solid_on_face(lift: float, rise: float, plane=PLANE):
    """A solid (rows 10-24, columns 12-27) on a face covering the rest of the image; the solid's inverse depth is
    the plane's plus LIFT plus RISE per row above the boundary between the masks (row 24.5)."""
    solid = np.zeros((40, 40), bool)
    solid[10:25, 12:28] = True
    depth = np.where(solid, plane + lift + rise * (24.5 - ROWS), plane)
    return solid, ~solid, depth


def test_the_plane_is_recovered_with_another_face_of_the_same_object_left_out():
    solid, face, depth = _solid_on_face(0.0, 0.0)
    depth[36:] = 0.1                                      # a strip of another face, far off the plane
    assert face_plane(solid, face, depth, margin=2, width=20) == pytest.approx([0.01, 0.02, 0.5])


def test_rim_height_is_read_margin_to_margin_plus_strip_rows_inside():
    # margin 2, strip 2: rows 21 and 22, 3.5 and 2.5 rows above the boundary, in equal numbers: median 3 rows
    assert rim_height(*_solid_on_face(0.0, 0.01), margin=2, strip=2) == pytest.approx(0.03)   # sunk: rises from 0
    assert rim_height(*_solid_on_face(0.05, 0.01), margin=2, strip=2) == pytest.approx(0.08)  # resting: raised


def test_no_rim_over_a_wall_or_beside_a_face():
    wall = 0.01 * COLS - 0.02 * ROWS + 1.5                # further toward the image bottom: seen from above, a wall
    assert rim_height(*_solid_on_face(0.05, 0.01, plane=wall), margin=2, strip=2) is None
    solid, face, depth = _solid_on_face(0.05, 0.01)
    face[:, 19:] = False                                  # the face lies beneath 7 of the solid's 16 columns
    assert rim_height(solid, face, depth, margin=2, strip=2) is None


BLOCK = Box((-0.9, 0.0, -0.9), (0.9, 0.5, 0.9))


def _pair(ball: Sphere):
    scene = render([BLOCK, ball], "test", 96, 128, elevation_deg=30)
    pair, = score_pairs(scene.instances, scene.inverse_depth, PARAMS)
    return pair


def test_a_ball_resting_on_a_top_face_scores_above_the_same_ball_sunk_into_it():
    resting = _pair(Sphere((0.1, 0.5 + 0.4, -0.2), 0.4))
    sunk = _pair(Sphere((0.1, 0.5 + 0.4 - 0.32, -0.2), 0.4))      # 80 % of its radius into the block
    assert resting["rim"] >= PARAMS.rim_high_frac and sunk["rim"] <= PARAMS.rim_low_frac
    assert resting["score"] == 1.0 and sunk["score"] < 0.75
