"""The PSC scene generator: exact depth against an analytic value, masks consistent with labels, seeded."""
from __future__ import annotations

import numpy as np

from vistar.synth.scenes import _BUILDERS, Box, Cylinder, Sphere, render, scene_pair


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


def _overlap(a, b) -> float:
    """How far two solids reach into each other (> 0: they interpenetrate; 0: touching; < 0: a gap), analytically."""
    if isinstance(b, (Sphere, Cylinder)) and isinstance(a, Box):
        a, b = b, a
    if isinstance(a, Sphere) and isinstance(b, Sphere):
        return a.radius + b.radius - float(np.linalg.norm(np.subtract(a.centre, b.centre)))
    if isinstance(a, Sphere):   # sphere and box: the box's point nearest the centre
        centre = np.array(a.centre)
        return a.radius - float(np.linalg.norm(centre - np.clip(centre, b.lo, b.hi)))
    if isinstance(a, Cylinder):  # vertical cylinder and box: their heights overlap, then the circle against the xz rectangle
        heights = min(a.y1, b.hi[1]) - max(a.y0, b.lo[1])
        centre = np.array([a.x, a.z])
        near = np.clip(centre, [b.lo[0], b.lo[2]], [b.hi[0], b.hi[2]])
        return min(heights, a.radius - float(np.linalg.norm(centre - near)))
    return min(min(a.hi[i], b.hi[i]) - max(a.lo[i], b.lo[i]) for i in range(3))


def test_overlap_of_hand_placed_solids():
    box = Box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    assert abs(_overlap(Sphere((0.5, 0.5, -0.5), 0.5), box)) < 1e-12                     # touching the front face
    assert abs(_overlap(box, Cylinder(0.5, -0.3, 0.5, 0.0, 2.0)) - 0.2) < 1e-12          # 0.2 into the front face
    assert abs(_overlap(box, Box((0.9, 0.5, 0.5), (2.0, 2.0, 2.0))) - 0.1) < 1e-12


def test_clean_scene_pairs_never_interpenetrate():
    # the clean scene of every layout family touches or stands apart; its penetrating twin really penetrates
    for seed in range(400):
        penetrating, clean, _ = _BUILDERS[seed % len(_BUILDERS)](np.random.default_rng(seed))
        assert _overlap(*clean) < 1e-9, f"seed {seed}: clean solids overlap by {_overlap(*clean):.4f}"
        assert _overlap(*penetrating) > 0.01, f"seed {seed}"
