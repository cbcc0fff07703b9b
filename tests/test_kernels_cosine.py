"""Cosine + max reduction: the numpy reference against hand-computed values, and the Triton kernel
(run by the Triton interpreter on CPU) against the reference."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from vistar.kernels.cosine import cosine_matrix, cosine_max_ref, max_over_rows, mean_pairwise_cosine


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


def test_mean_pairwise_cosine_hand_computed():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    # pairs: (0,1)=0, (0,2)=1/√2, (1,2)=1/√2
    assert mean_pairwise_cosine(x) == pytest.approx(2 / np.sqrt(2) / 3)
    with pytest.raises(ValueError):
        mean_pairwise_cosine(x[:1])


def test_width_mismatch_is_an_error():
    with pytest.raises(ValueError, match="widths differ"):
        cosine_matrix(np.ones((2, 3)), np.ones((2, 4)))


# The interpreter must be switched on before triton is imported, so the comparison runs in a child process.
_TRITON_CHECK = textwrap.dedent("""
    import numpy as np, torch
    from vistar.kernels.cosine import cosine_max_ref, cosine_max_triton
    rng = np.random.default_rng(0)
    cases = [(5, 7, 40), (17, 3, 33), (1, 20, 8), (16, 16, 64)]
    for n, m, d in cases:
        a, b = rng.normal(size=(n, d)), rng.normal(size=(m, d))
        a[0] = 0.0                       # zero vector: cosine 0, never NaN
        b[-1] = b[0]                     # duplicate column
        if n > 2:
            a[2] = a[1]                  # duplicate row: tie must go to row 1
        sim_r, max_r, arg_r = cosine_max_ref(a, b)
        sim_t, max_t, arg_t = cosine_max_triton(torch.tensor(a), torch.tensor(b), block_n=4, block_m=8, block_d=16)
        np.testing.assert_allclose(sim_t.numpy(), sim_r, atol=1e-5)
        np.testing.assert_allclose(max_t.numpy(), max_r, atol=1e-5)
        np.testing.assert_array_equal(arg_t.numpy(), arg_r)
    print("ok", len(cases))
""")


def test_triton_kernel_matches_reference_in_interpreter():
    pytest.importorskip("triton", reason="triton is not installed (the `kernels` path needs it)")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, "-c", _TRITON_CHECK], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok 4"
