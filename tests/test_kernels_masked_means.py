"""Masked means: the numpy reference against hand-computed values, and its input checks.
(The Triton kernel is compared with this reference in tests/test_kernels_triton_interpreted.py.)"""
import numpy as np
import pytest

from vistar.kernels.masked_means import masked_means, masked_means_ref


def test_hand_computed_means_and_counts():
    values = np.array([[[1.0, 2.0], [3.0, 4.0]]])                 # B=1, H=W=2
    masks = np.array([[[[1, 0], [0, 1]], [[1, 1], [1, 1]], [[0, 0], [0, 0]]]], bool)
    means, counts = masked_means_ref(values, masks)
    assert means.shape == (1, 3) and counts.tolist() == [[2, 4, 0]]
    assert means[0, 0] == 2.5 and means[0, 1] == 2.5
    assert np.isnan(means[0, 2])                                  # empty mask: no mean, not 0


def test_channels_and_batch_are_independent():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(3, 2, 6, 5))
    masks = rng.random((3, 4, 6, 5)) < 0.5
    means, counts = masked_means_ref(values, masks)
    assert means.shape == (3, 4, 2)
    for b in range(3):
        for k in range(4):
            for c in range(2):
                sel = values[b, c][masks[b, k]]
                assert counts[b, k] == sel.size
                if sel.size:
                    assert means[b, k, c] == pytest.approx(sel.mean(), rel=1e-12)


def test_auto_dispatch_on_numpy_is_the_reference():
    rng = np.random.default_rng(1)
    values, masks = rng.normal(size=(2, 7, 9)), rng.random((2, 3, 7, 9)) < 0.3
    np.testing.assert_array_equal(masked_means(values, masks)[0], masked_means_ref(values, masks)[0])


def test_shape_mismatch_and_unknown_backend_are_clear_errors():
    with pytest.raises(ValueError, match="differ in batch or size"):
        masked_means_ref(np.zeros((1, 4, 4)), np.zeros((1, 2, 4, 5), bool))
    with pytest.raises(ValueError, match="expected values"):
        masked_means_ref(np.zeros((4, 4)), np.zeros((1, 2, 4, 4), bool))
    with pytest.raises(ValueError, match="unknown masked means kernel backend 'cuda'"):
        masked_means(np.zeros((1, 4, 4)), np.zeros((1, 1, 4, 4), bool), backend="cuda")
