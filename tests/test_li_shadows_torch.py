"""The batched torch shadow detector (used with --device cuda) computes the numpy detector's masks, checked on
CPU tensors: its building blocks against OpenCV exactly (within float rounding), whole masks on rendered scenes."""
import math

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from vistar.api import Instances  # noqa: E402
from vistar.features.shadows_classical import ClassicalShadowDetector  # noqa: E402
from vistar.features.shadows_torch import area_matrix, closing, detect_batch, gaussian_blur  # noqa: E402
from vistar.synth.lighting import sample_scene  # noqa: E402


def _vector(azimuth, elevation):
    az, el = math.radians(azimuth), math.radians(elevation)
    return np.array([math.sin(az) * math.cos(el), math.sin(el), math.cos(az) * math.cos(el)])


def _image(seed, shape=(37, 53)):
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def _t(a):
    return torch.from_numpy(a)[None, None]


@pytest.mark.parametrize("size", [3, 7, 15])
def test_closing_equals_opencv_with_the_elliptic_element(size):
    x = _image(size)
    expected = cv2.morphologyEx(x, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size)))
    np.testing.assert_array_equal(closing(_t(x), size)[0, 0].numpy(), expected)


@pytest.mark.parametrize("sigma", [1.0, 2.5, 9.0])   # 9.0: the kernel is wider than the image (repeated reflection)
def test_gaussian_blur_equals_opencv(sigma):
    x = _image(int(sigma * 10))
    expected = cv2.GaussianBlur(x, (0, 0), sigma)
    np.testing.assert_allclose(gaussian_blur(_t(x), sigma)[0, 0].numpy(), expected, atol=2e-6)


@pytest.mark.parametrize("n,m", [(512, 160), (320, 100), (240, 75), (64, 32)])
def test_area_matrix_equals_opencv_inter_area(n, m):
    x = _image(n, (n, n))
    expected = cv2.resize(x, (m, m), interpolation=cv2.INTER_AREA)
    a = area_matrix(n, m)
    np.testing.assert_allclose(a @ x @ a.T, expected, atol=1e-5)


@pytest.mark.slow
def test_batched_torch_masks_equal_the_numpy_detector_on_rendered_scenes():
    rng = np.random.default_rng(920000)
    scenes = [sample_scene(_vector(rng.uniform(0, 360), rng.uniform(20, 60)), 920000 + i) for i in range(12)]
    scenes.append(sample_scene(_vector(30, 40), 920099, size=(600, 800)))   # reduced to the working size first
    detector = ClassicalShadowDetector()
    expected = [detector(s.image, s.instances) for s in scenes]
    got = detect_batch([s.image for s in scenes], [s.instances for s in scenes], detector, device="cpu")
    assert sum(e.sum() for e in expected) > 1000   # the scenes do have shadows
    for mask, want in zip(got, expected):
        assert mask.shape == want.shape and mask.dtype == bool
        # float rounding may flip pixels whose ratio sits on the threshold; nothing else may differ
        assert (mask != want).sum() <= max(3, 0.002 * want.sum())


def test_uniform_ground_has_no_shadow_on_torch_either():
    image = np.full((120, 160, 3), 180, np.uint8)
    (mask,) = detect_batch([image], [Instances.empty(120, 160)], ClassicalShadowDetector(), device="cpu")
    assert not mask.any()
