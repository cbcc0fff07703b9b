"""Depth geometry reference: planes and quadrics with known normals/curvature, and agreement with an
independent formulation (OpenCV box filter). The Triton kernels are compared with this reference in
tests/test_kernels_triton_interpreted.py."""
import cv2
import numpy as np
import pytest

from vistar.kernels.depth_geometry import mean_abs_laplacian_ref, normal_dispersion_ref, surface_normals


def _grid(h, w):
    return np.mgrid[0:h, 0:w].astype(np.float64)


def test_plane_normal_is_the_hand_computed_unit_vector_everywhere():
    y, x = _grid(20, 40)
    n = surface_normals(0.3 + 0.01 * x - 0.02 * y)
    # slopes per longest-side unit: ∂z/∂x = 0.01·40 = 0.4, ∂z/∂y = −0.8 → n ∝ (−0.4, 0.8, 1)
    expected = np.array([-0.4, 0.8, 1.0]) / np.sqrt(0.16 + 0.64 + 1.0)
    np.testing.assert_allclose(n, np.broadcast_to(expected, n.shape), atol=1e-12)


def test_plane_has_no_dispersion_and_no_curvature():
    y, x = _grid(31, 23)
    plane = 0.5 + 0.013 * x - 0.007 * y
    assert normal_dispersion_ref(plane, 5) < 1e-7
    assert mean_abs_laplacian_ref(plane) < 1e-12


def test_paraboloid_laplacian_is_exact():
    # the 5-point stencil is exact on quadratics: Δ(a·x² + b·y²) = 2a + 2b at every interior pixel
    y, x = _grid(15, 18)
    assert mean_abs_laplacian_ref(0.003 * x ** 2 - 0.001 * y ** 2) == pytest.approx(0.004, abs=1e-12)
    assert mean_abs_laplacian_ref(np.ones((2, 9))) == 0.0           # no interior pixel


def test_ridge_disperses_normals_near_the_fold_only():
    y, x = _grid(40, 40)
    ridge = np.abs(x - 19.5) * 0.02                                 # two planes meeting along a vertical fold
    angle = normal_dispersion_ref(ridge, 5)
    # each normal tilts by atan(0.02·40 = 0.8) either side of the fold; only columns near it see both planes
    assert 0.01 < angle < np.arctan(0.8)


@pytest.mark.parametrize("window", [1, 3, 4, 5, 7])
@pytest.mark.parametrize("shape", [(33, 29), (6, 7)])  # (6, 7): no interior, the mirrored border counts
def test_dispersion_matches_an_opencv_box_filter_formulation(window, shape):
    rng = np.random.default_rng(window)
    depth = rng.random(shape).cumsum(axis=0) / 10
    n = surface_normals(depth)
    mean = cv2.blur(n, (window, window), borderType=cv2.BORDER_REFLECT)
    mean /= np.linalg.norm(mean, axis=-1, keepdims=True)
    angle = np.arccos(np.clip((n * mean).sum(-1), -1, 1))
    r = window // 2 + 1
    inner = angle[r:-r, r:-r] if min(shape) > 2 * r else angle
    # arccos near 1 turns float64 rounding (1e-16) into angles of up to sqrt(2e-16) ≈ 1.5e-8 rad, and which way a
    # sum rounds depends on the BLAS/OpenCV build: 1e-7 rad is that noise floor, far below any formulation error
    assert normal_dispersion_ref(depth, window) == pytest.approx(inner.mean(), abs=1e-7)


def test_window_must_be_positive():
    y, x = _grid(12, 12)
    with pytest.raises(ValueError, match="window must be"):
        normal_dispersion_ref(np.sin(x / 3) * np.cos(y / 4), 0)


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (6, 1)])
def test_maps_one_pixel_thick_are_read_not_refused(shape):
    """A 1-pixel-high thumbnail has no slope across: its normals follow the long axis only, and a plane
    along it disperses nothing."""
    line = 0.25 * np.arange(max(shape), dtype=np.float64).reshape(shape)
    normals = surface_normals(line)
    slope = 0.25 * max(shape)                       # depth per unit of the longest side
    expected = np.array([-slope, 0.0, 1.0]) if shape[0] == 1 else np.array([0.0, -slope, 1.0])
    if max(shape) == 1:
        expected = np.array([0.0, 0.0, 1.0])
    assert np.allclose(normals, expected / np.linalg.norm(expected))
    assert normal_dispersion_ref(line, 5) == pytest.approx(0.0, abs=1e-12)
