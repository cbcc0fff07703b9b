"""LBP codes: the numpy reference and the numba kernel against scikit-image (bit for bit) and a hand-worked
example; tile histograms by hand. The Triton kernel is compared in tests/test_kernels_triton_interpreted.py."""
import numpy as np
import pytest

from vistar.kernels.lbp import METHODS, lbp_codes_numba, lbp_codes_ref, lbp_tile_histograms, offsets, tile_histograms_ref

skimage_feature = pytest.importorskip("skimage.feature", reason="scikit-image (test extra) is the independent oracle")


def _images():
    rng = np.random.default_rng(0)
    return [rng.integers(0, 3, (13, 17)).astype(np.uint8),        # many ties: exercises the ≥ 0 rounding
            rng.integers(0, 256, (24, 31)).astype(np.uint8),
            np.full((6, 5), 7, np.uint8),                          # flat: zeros outside decide the border codes
            rng.integers(0, 5, (1, 1)).astype(np.uint8),
            rng.integers(0, 5, (2, 9)).astype(np.uint8),
            (rng.random((9, 8)) * 4).round(1)]                    # float input


@pytest.mark.parametrize("method", list(METHODS))
def test_reference_and_numba_equal_skimage(method):
    for image in _images():
        expected = skimage_feature.local_binary_pattern(image.astype(np.float64), 8, 1, method=method)
        np.testing.assert_array_equal(lbp_codes_ref(image, method), expected)
        np.testing.assert_array_equal(lbp_codes_numba(image, method), expected)


def test_hand_worked_centre_pixel():
    # centre 5; axis neighbours E=9, N=1, W=9, S=1 (bits 0, 2, 4, 6 → 1, 0, 1, 0); corners all 9.
    image = np.array([[9, 1, 9], [9, 5, 9], [9, 1, 9]], np.float64)
    rp, cp = offsets()
    assert rp[2] == -1 and cp[0] == 1 and rp[1] == -0.70711
    # diagonal NE sample at (1 − 0.70711, 1 + 0.70711): bilinear over rows 0..1, cols 1..2
    dr, dc = 1 - 0.70711, 0.70711
    ne = (1 - dr) * ((1 - dc) * 1 + dc * 9) + dr * ((1 - dc) * 5 + dc * 9)
    assert ne == pytest.approx(7.0, abs=1e-4)                        # ≥ 5: bit set; NW, SW, SE alike by symmetry
    # bits: E=1, NE=1, N=0, NW=1, W=1, SW=1, S=0, SE=1 → default 0b10111011 = 187, uniform: 4 changes → 9
    assert lbp_codes_ref(image, "default")[1, 1] == 187
    assert lbp_codes_ref(image, "uniform")[1, 1] == 9


def test_tile_histograms_by_hand():
    codes = np.arange(36).reshape(6, 6) % 3
    hist = tile_histograms_ref(codes, tiles=2, bins=3, border=1)   # inner 4×4 split into 2×2 tiles
    inner = codes[1:5, 1:5]
    assert hist.shape == (4, 3) and hist.sum() == 16
    np.testing.assert_array_equal(hist[0], np.bincount(inner[:2, :2].ravel(), minlength=3))
    np.testing.assert_array_equal(hist[3], np.bincount(inner[2:, 2:].ravel(), minlength=3))
    # more tiles than rows: empty tiles are zero rows, every pixel still counted once
    assert tile_histograms_ref(codes, tiles=5, bins=3, border=1).sum() == 16


def test_dispatch_backends_agree_and_reject_bad_input():
    image = np.random.default_rng(3).integers(0, 256, (20, 22)).astype(np.uint8)
    c_ref, h_ref = lbp_tile_histograms(image, 4, backend="numpy")
    c_auto, h_auto = lbp_tile_histograms(image, 4)
    np.testing.assert_array_equal(c_auto, c_ref)
    np.testing.assert_array_equal(h_auto, h_ref)
    with pytest.raises(ValueError, match="unknown LBP method"):
        lbp_codes_ref(image, "ror")
    with pytest.raises(ValueError, match=r"\(H, W\)"):
        lbp_codes_ref(np.zeros((4, 4, 3)), "uniform")
