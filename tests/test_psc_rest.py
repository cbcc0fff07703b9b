"""The sink reading's parts on hand-made masks and planar depth (values worked out by hand), and PSC on rendered
balls resting on, or sunk into, a block's top face seen from above."""
import numpy as np
import pytest
from scipy import ndimage

from vistar.engine.params import metric_params
from vistar.metrics.psc import score_pairs
from vistar.metrics.psc_rest import (
    bulge_elevation,
    checked_elevation,
    face_elevation,
    face_parts,
    face_plane,
    outline_circle,
    rim_height,
    seat,
    sides_elevation,
    sink_depth,
    sits_on,
)
from vistar.ontology import Ontology
from vistar.synth.scenes import Box, Sphere, render

PARAMS = metric_params(Ontology.load(), "PSC")
ROWS, COLS = np.mgrid[0:40, 0:40].astype(float)
PLANE = 0.01 * COLS + 0.02 * ROWS + 0.5          # a face seen from above: nearer toward the image bottom
ROWS60, COLS60 = np.mgrid[0:60, 0:60].astype(float)


def _sink(solid, face, depth, margin, tolerance):
    """sink_depth on the fits PSC hands it (psc_rest.seat)."""
    return sink_depth(solid, face, depth, margin, tolerance, seat(solid, face, depth, margin))


def _rim(solid, face, depth, margin):
    """rim_height on the fits PSC hands it (psc_rest.seat)."""
    return rim_height(solid, face, depth, margin, seat(solid, face, depth, margin))


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


def test_rim_height_is_read_margin_to_twice_margin_rows_inside():
    # margin 2: rows 21 and 22, 3.5 and 2.5 rows above the boundary, in equal numbers: median 3 rows
    assert _rim(*_solid_on_face(0.0, 0.01), margin=2) == pytest.approx(0.03)    # sunk: rises from 0
    assert _rim(*_solid_on_face(0.05, 0.01), margin=2) == pytest.approx(0.08)   # resting: raised


def test_no_reading_over_a_wall_or_beside_a_face():
    wall = 0.01 * COLS - 0.02 * ROWS + 1.5                # further toward the image bottom: seen from above, a wall
    assert sits_on(*_solid_on_face(0.05, 0.01, plane=wall), margin=2) is None
    assert _rim(*_solid_on_face(0.05, 0.01, plane=wall), margin=2) is None
    solid, face, depth = _solid_on_face(0.05, 0.01)
    assert sits_on(solid, face, depth, margin=2) == pytest.approx([0.01, 0.02, 0.5])
    face[:, 19:] = False                                  # the face lies beneath 7 of the solid's 16 columns
    assert sits_on(solid, face, depth, margin=2) is None


def _disk(centre_row: float, centre_col: float, radius: float, size: int = 60) -> np.ndarray:
    rows, cols = np.mgrid[0:size, 0:size]
    return (rows - centre_row) ** 2 + (cols - centre_col) ** 2 <= radius ** 2


def test_the_circle_comes_from_the_upper_outline_whatever_cuts_the_lower_one():
    ball = _disk(25, 30, 10.5)                           # 21 columns wide: radius 10.5 about column 30
    assert outline_circle(ball) == pytest.approx((30, 25, 10.5), abs=0.3)
    cut = ball.copy()
    cut[31:] = False                                      # the lower part below the face's intersection curve
    assert outline_circle(cut) == pytest.approx((30, 25, 10.5), abs=0.3)
    grown = ndimage.binary_dilation(ball)                 # a mask one pixel too large: same centre
    assert outline_circle(grown)[:2] == pytest.approx((30, 25), abs=0.3)
    square = np.zeros((60, 60), bool)
    square[15:36, 20:41] = True                           # a box's outline: no circle
    assert outline_circle(square) is None


def test_the_elevation_is_read_from_the_top_face_only():
    face = np.zeros((60, 60), bool)
    face[10:30, 10:50] = True                             # the top: 20 rows for 40 columns, sin e = 0.5
    face[30:45, 10:50] = True                             # the block's front face, off the top's plane
    plane = np.array([0.0, 0.02, 0.3])
    depth = np.where(ROWS60 < 30, 0.02 * ROWS60 + 0.3, 0.2)
    assert face_elevation(face, depth, plane, tolerance=0.001) == pytest.approx(np.radians(30))


def _ball_on_top(lift: float, elevation_deg: float = 30.0, face_rows: int = 20, front_rows: int = 0, edge: int = 38):
    """A ball of radius 10.5 px centred (25, 30) over a top face seen from ELEVATION_DEG (FACE_ROWS rows by 40
    columns: 20 is a square's at 30°), its centre LIFT radii above the face: each pixel's inverse depth is the
    face's plane plus (height above the face in radii) x radius / cos e rows of the plane's slope (psc_rest),
    height = LIFT - t cos e + sqrt(1 - x^2 - t^2) sin e. FRONT_ROWS: the block's front face below the top's
    front edge (row EDGE), its inverse depth falling tan² e times the top's slope per row."""
    ball = _disk(25, 30, 10.5)
    face = np.zeros((60, 60), bool)
    face[edge - face_rows:edge + front_rows, 10:50] = True
    face &= ~ball
    slope, e = 0.02, np.radians(elevation_deg)
    x, t = (COLS60 - 30) / 10.5, (ROWS60 - 25) / 10.5
    height = lift - t * np.cos(e) + np.sqrt(np.clip(1 - x ** 2 - t ** 2, 0, None)) * np.sin(e)
    plane = np.where(ROWS60 < edge, slope * ROWS60, slope * edge - slope * np.tan(e) ** 2 * (ROWS60 - edge)) + 0.3
    depth = plane + np.where(ball, slope * 10.5 * height / np.cos(e), 0.0)
    return ball & (height > 0), face, depth             # below the face's plane the ball is hidden


@pytest.mark.parametrize("lift", [1.0, 0.6, 0.2])
def test_sink_depth_reads_how_deep_the_ball_is_sunk_in_radii(lift):
    assert _sink(*_ball_on_top(lift), margin=2, tolerance=0.001) == pytest.approx(1.0 - lift, abs=0.05)


BLOCK = Box((-0.9, 0.0, -0.9), (0.9, 0.5, 0.9))


def _pair(ball: Sphere):
    scene = render([BLOCK, ball], "test", 96, 128, elevation_deg=30)
    pair, = score_pairs(scene.instances, scene.inverse_depth, PARAMS)
    return pair


def test_a_ball_resting_on_a_top_face_scores_above_the_same_ball_sunk_into_it():
    resting = _pair(Sphere((0.1, 0.5 + 0.4, -0.2), 0.4))
    sunk = _pair(Sphere((0.1, 0.5 + 0.4 - 0.32, -0.2), 0.4))      # 80 % of its radius into the block
    assert resting["sink"] <= PARAMS.sink_low and sunk["sink"] >= PARAMS.sink_high
    assert resting["score"] == 1.0 and sunk["score"] < 0.75


def test_a_round_outline_whose_depth_is_no_sphere_gives_no_sink_reading():
    ball, face, depth = _ball_on_top(1.0)
    flat = np.where(ball, 0.02 * ROWS60 + 0.3 + 0.02 * 10.5 * 0.5, depth)   # a disc standing half a radius proud
    assert _sink(ball, face, depth, margin=2, tolerance=0.001) is not None
    assert _sink(ball, face, flat, margin=2, tolerance=0.001) is None


def test_the_bulge_fit_recovers_the_elevation_and_falls_back_on_its_prior_without_a_bulge():
    bulge = np.linspace(0.2, 1.0, 50)
    raised = 1.3 + np.tan(np.radians(45)) * bulge          # h / cos e + tan e x bulge, seen from 45°
    # slope = (cov + w tan 30°) / (var + w): var = 0.0555, w = 0.001 pulls 45° down by under half a degree
    assert np.degrees(bulge_elevation(raised, bulge)) == pytest.approx(45, abs=0.5)
    assert bulge_elevation(np.full(9, 1.3), np.full(9, 0.5)) == pytest.approx(np.radians(30))   # all alike: prior


def test_the_face_elevation_is_kept_clipped_where_the_bulge_agrees_else_the_bulge_is():
    deg = np.radians
    assert checked_elevation(deg(35), deg(40)) == pytest.approx(deg(35))
    assert checked_elevation(deg(60), deg(45)) == pytest.approx(deg(42))   # clipped into 18-42°
    assert checked_elevation(deg(10), deg(20)) == pytest.approx(deg(18))
    assert checked_elevation(deg(20), deg(50)) == pytest.approx(deg(50))   # 30° apart: a long top's, not a square's


def test_a_long_top_seen_broadside_does_not_mislead_the_sink_reading():
    # seen from 50°, a top twice as wide as deep is 40 x 0.5 x sin 50° = 15 rows tall: read as a square, 22°
    ball, face, depth = _ball_on_top(1.0, elevation_deg=50, face_rows=15)
    assert np.degrees(face_elevation(face, depth, np.array([0.0, 0.02, 0.3]), tolerance=0.001)) < 25
    # the ball's bulge overrules it (pulled toward 30° by its prior: resting reads -0.06); with 22° no reading at all
    assert _sink(ball, face, depth, margin=2, tolerance=0.001) == pytest.approx(0.0, abs=0.1)


def test_no_sink_reading_where_the_bulge_needs_a_camera_nearly_overhead():
    # as for a ball at a block's front face whose plane ring lies on the top face: its bulge fits 85-88°
    assert _sink(*_ball_on_top(1.0, elevation_deg=70), margin=2, tolerance=0.001) is not None
    assert _sink(*_ball_on_top(1.0, elevation_deg=84), margin=2, tolerance=0.001) is None


def _block(side_slope: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block seen from above: its top rows 10-20 (inverse depth 0.3 + 0.03 per row), its front rows 21-39
    (from the edge's 0.9, SIDE_SLOPE per row), columns 5-44."""
    face = np.zeros((60, 60), bool)
    face[10:40, 5:45] = True
    return face, np.where(ROWS60 <= 20, 0.3 + 0.03 * ROWS60, 0.9 + side_slope * (ROWS60 - 20))


def test_a_block_splits_into_its_top_and_its_front_by_which_way_its_depth_runs():
    face, depth = _block(np.full((60, 60), -0.01))
    top, sides = face_parts(face, depth)
    # row derivatives between two face pixels: rows 11-20 rise (row 20: 0.89 - 0.87), rows 21-38 fall; rows 10 and
    # 39 have no face pixel above or below. Each part eroded by one pixel: rows 12-19 and 22-37, columns 6-43
    expected_top, expected_sides = np.zeros((60, 60), bool), np.zeros((60, 60), bool)
    expected_top[12:20, 6:44] = True
    expected_sides[22:38, 6:44] = True
    assert (top == expected_top).all() and (sides == expected_sides).all()


def test_the_elevation_comes_from_a_vertical_face_against_the_top():
    # the top rises 0.03 per row, the front falls 0.01 per row: tan² e = 0.01 / 0.03 = 1/3, e = 30°
    face, depth = _block(np.full((60, 60), -0.01))
    top_plane = np.array([0.0, 0.03, 0.3])
    assert np.degrees(sides_elevation(face_parts(face, depth)[1], depth, top_plane)) == pytest.approx(30)
    turned = depth + np.where(ROWS60 > 20, 0.004 * COLS60, 0.0)   # a face turned about the vertical: rows the same
    assert np.degrees(sides_elevation(face_parts(face, turned)[1], turned, top_plane)) == pytest.approx(30)
    rising = np.where(ROWS60 <= 20, depth, 0.9 + 0.001 * (ROWS60 - 20))   # no fall: no vertical face seen from above
    assert sides_elevation(face & (ROWS60 > 20), rising, top_plane) is None
    assert sides_elevation(np.zeros((60, 60), bool), depth, top_plane) is None


@pytest.mark.parametrize("lift", [1.0, 0.6, 0.2])
def test_a_shallow_top_with_its_front_face_in_view_is_read_with_the_front_faces_elevation(lift):
    # seen from 50°, a top 15 rows deep reads 22° as a square; the front face (rows 38-51) gives 50°, and the
    # plane ring, reaching rows 38-41 of the front, is fitted on the top's pixels only
    ball, face, depth = _ball_on_top(lift, elevation_deg=50, face_rows=15, front_rows=14)
    assert _sink(ball, face, depth, margin=2, tolerance=0.001) == pytest.approx(1.0 - lift, abs=0.02)


def test_no_sink_reading_for_a_round_solid_with_the_objects_front_beneath_it():
    # the ball's lowest rows reach row 35: with the top's front edge at row 33 only the front face lies beneath it
    # (a cylinder before a box's front face, its top outline round); with the edge at row 38, the top does
    assert _sink(*_ball_on_top(1.0, face_rows=28, front_rows=14, edge=38), margin=2, tolerance=0.001) is not None
    assert _sink(*_ball_on_top(1.0, face_rows=28, front_rows=14, edge=33), margin=2, tolerance=0.001) is None


def _moved(scene: tuple[np.ndarray, ...], rows: int, cols: int) -> tuple[np.ndarray, ...]:
    """SCENE (solid, face, depth) padded by ROWS and COLS at its top left (negative: cropped there); the padding
    holds no object and repeats the depth at the edge."""
    pad = ((max(rows, 0), 0), (max(cols, 0), 0))
    crop = (slice(max(-rows, 0), None), slice(max(-cols, 0), None))
    solid, face, depth = scene
    return np.pad(solid, pad)[crop], np.pad(face, pad)[crop], np.pad(depth, pad, mode="edge")[crop]


@pytest.mark.parametrize("front_rows, edge", [(14, 38), (14, 41)])
def test_the_sink_reading_does_not_depend_on_where_the_images_origin_lies(front_rows, edge):
    # a top 4 rows deep: the ring's top pixels lie in one row (edge 41), which leaves the top's row slope
    # undetermined; least squares about the image's origin answered with a slope that moved with a crop
    scene = _ball_on_top(0.6, face_rows=4 if edge == 41 else 20, front_rows=front_rows, edge=edge)
    reading = _sink(*scene, margin=2, tolerance=0.001)
    assert reading is not None
    for rows, cols in ((13, 7), (-9, -6), (200, 0), (0, 500)):
        assert _sink(*_moved(scene, rows, cols), margin=2, tolerance=0.001) == pytest.approx(reading, abs=1e-9)


def test_a_ring_of_top_pixels_in_one_row_falls_back_on_the_plane_across_the_ring():
    # the top's pixels within 5 px of the ball (the ring) lie in row 39 only: no plane of their own; version 6's
    # plane, fitted on the whole ring (the front's pixels off it left out), is the top's here: sunk 40 % reads so
    ball, face, depth = _ball_on_top(0.6, face_rows=4, front_rows=14, edge=41)
    upper, _ = face_parts(face, depth)
    near = ndimage.binary_dilation(ball, np.ones((3, 3), bool), iterations=5)
    assert np.unique(np.nonzero(near & upper)[0]).tolist() == [39]
    assert _sink(ball, face, depth, margin=2, tolerance=0.001) == pytest.approx(0.4, abs=0.02)


def test_a_ball_whose_centre_reads_far_above_the_face_gives_no_sink_reading():
    # lifted 2.5 radii the ball floats over the face (its plane another face's): no reading, not a negative sink
    assert _sink(*_ball_on_top(1.0), margin=2, tolerance=0.001) is not None
    assert _sink(*_ball_on_top(2.5), margin=2, tolerance=0.001) is None


@pytest.mark.parametrize("lift", [1.0, 0.6])
def test_a_top_too_noisy_for_its_own_elevation_is_read_with_the_front_faces(lift):
    # no face pixel lies within a tolerance of 1e-9 of its plane once the block is roughened, so the top's
    # foreshortening cannot be read; the front face still gives the elevation, and the reading stands
    ball, face, depth = _ball_on_top(lift, elevation_deg=50, face_rows=15, front_rows=14)
    roughened = depth + np.where(face, 1e-6 * (2 * ((ROWS60 + COLS60) % 2) - 1), 0.0)
    assert face_elevation(face, roughened, np.array([0.0, 0.02, 0.3]), tolerance=1e-9) is None
    assert _sink(ball, face, roughened, margin=2, tolerance=1e-9) == pytest.approx(1.0 - lift, abs=0.02)


def test_a_solid_in_two_parts_at_its_ends_has_no_outline_circle():
    parts = np.zeros((60, 60), bool)
    parts[20:30, 0:3] = parts[20:30, 57:60] = True        # no column within 0.9 half-widths of the middle
    assert outline_circle(parts) is None
