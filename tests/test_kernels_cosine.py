"""Cosine + max reduction against hand-computed values."""
import numpy as np
import pytest

from vistar.kernels.cosine import cosine_matrix, cosine_max_ref, max_over_rows


def test_cosine_matrix_hand_computed():
    a = np.array([[1.0, 0.0], [3.0, 4.0]])
    b = np.array([[0.0, 2.0], [1.0, 1.0], [-1.0, 0.0]])
    expected = np.array([[0.0, 1 / np.sqrt(2), -1.0],
                         [0.8, 7 / (5 * np.sqrt(2)), -0.6]])
    np.testing.assert_allclose(cosine_matrix(a, b), expected, atol=1e-12)


def test_max_over_rows_breaks_ties_to_first_row():
    sim = np.array([[0.5, 0.2, 0.9], [0.5, 0.7, 0.1], [0.1, 0.7, 0.3]])
    values, arg = max_over_rows(sim)
    np.testing.assert_array_equal(values, [0.5, 0.7, 0.9])
    np.testing.assert_array_equal(arg, [0, 1, 0])


def test_zero_vector_has_zero_cosine():
    sim, values, arg = cosine_max_ref(np.zeros((1, 3)), np.array([[1.0, 2.0, 3.0]]))
    assert sim[0, 0] == 0.0 and values[0] == 0.0 and arg[0] == 0


def test_width_mismatch_is_an_error():
    with pytest.raises(ValueError, match="widths differ"):
        cosine_matrix(np.ones((2, 3)), np.ones((2, 4)))
