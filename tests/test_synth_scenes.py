"""The PSC scene generator: exact depth against an analytic value, masks consistent with labels, seeded."""
from __future__ import annotations

import numpy as np

from vistar.synth.scenes import Box, Sphere, render, scene_pair


def test_depth_of_a_box_face_matches_the_camera_geometry():
    scene = render([Box((-1.0, 0.0, -1.0), (1.0, 1.0, 1.0))], "single", 64, 64, elevation_deg=0.0, distance=6.0)
    # elevation 0: camera at (0, 0.5, -6) looking along +z; the front face z = -1 is 5 units away on the axis
    assert scene.labels[32, 32] == 0
    assert abs(float(scene.depth[32, 32]) - 5.0) < 1e-4
    assert abs(float(scene.inverse_depth[32, 32]) - 0.2) < 1e-5


def test_nearest_surface_wins_and_masks_follow_labels():
    near, far = Sphere((0.0, 0.5, -1.0), 0.5), Sphere((0.0, 0.5, 1.0), 1.0)
    scene = render([far, near], "occluding", 65, 65, elevation_deg=0.0)   # odd size: pixel 32 is on the axis
    assert scene.labels[32, 32] == 1          # the near sphere hides the far one at the centre
    assert abs(float(scene.depth[32, 32]) - 4.5) < 1e-5
    np.testing.assert_array_equal(scene.instances.masks[0], scene.labels == 0)
    assert scene.instances.masks.sum(0).max() <= 1  # visible masks never overlap


def test_scene_pairs_are_seeded_and_labelled():
    a_pen, a_ok = scene_pair(5)
    b_pen, b_ok = scene_pair(5)
    np.testing.assert_array_equal(a_pen.depth, b_pen.depth)
    assert a_pen.kind == "penetrating" and a_ok.kind in ("touching", "occluding")
    assert len(a_pen.instances) == 2 and all(m.any() for m in a_pen.instances.masks)
