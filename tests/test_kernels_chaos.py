"""Chaos pair statistics: numba and Triton (interpreter) against the numpy reference, and hand-counted sets."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vistar.kernels.chaos import pair_stats, pair_stats_numba, pair_stats_ref


def _case(seed: int, n: int = 4, h: int = 24, w: int = 32):
    rng = np.random.default_rng(seed)
    masks = np.zeros((n, h, w), bool)
    for k in range(n):
        y0, x0 = rng.integers(0, h - 6), rng.integers(0, w - 6)
        masks[k, y0:y0 + rng.integers(4, 12), x0:x0 + rng.integers(4, 14)] = True
    masks |= rng.random((n, h, w)) < 0.05
    depth = rng.random((h, w)).astype(np.float32)
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    return masks, depth, pairs


def test_reference_counts_on_a_hand_made_pair():
    masks = np.zeros((2, 5, 8), bool)
    masks[0, :, :4] = True                    # A: columns 0-3
    masks[1, :, 4:] = True                    # B: columns 4-7, touching A along one edge
    depth = np.tile(np.arange(8, dtype=np.float32), (5, 1))
    stats = pair_stats_ref(masks, depth, np.array([[0, 1]]), touch_px=1, band_px=1)[0]
    # contact = columns 3 and 4; band = columns 2..5
    assert stats[8] == 10
    assert stats[1] == 10 and stats[0] == 5 * (2 + 3)     # A in band: columns 2, 3
    assert stats[3] == 10 and stats[2] == 5 * (4 + 5)     # B in band: columns 4, 5
    assert stats[5] == 10 and stats[4] == 5 * (0 + 1)     # A away: columns 0, 1
    assert stats[7] == 10 and stats[6] == 5 * (6 + 7)


def test_overlap_pixels_belong_to_neither_object():
    masks = np.zeros((2, 6, 6), bool)
    masks[0, 1:5, 0:4] = True
    masks[1, 1:5, 2:6] = True
    stats = pair_stats_ref(masks, np.ones((6, 6), np.float32), np.array([[0, 1]]), 1, 1)[0]
    assert stats[1] + stats[5] == 8 and stats[3] + stats[7] == 8   # 16 pixels each minus the 8 shared


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_numba_matches_reference(seed):
    masks, depth, pairs = _case(seed)
    for touch, band in ((1, 2), (0, 1), (2, 3)):
        np.testing.assert_allclose(pair_stats_numba(masks, depth, pairs, touch, band),
                                   pair_stats_ref(masks, depth, pairs, touch, band), rtol=1e-12, atol=1e-9)


def test_dispatch_rejects_unknown_backend():
    masks, depth, pairs = _case(0)
    with pytest.raises(ValueError, match="unknown chaos kernel backend"):
        pair_stats(masks, depth, pairs, 1, 1, backend="cuda-magic")


@pytest.mark.slow
def test_triton_matches_reference_in_interpreter(tmp_path):
    """Runs in a subprocess: TRITON_INTERPRET must be set before triton is imported."""
    pytest.importorskip("triton")
    script = tmp_path / "run.py"
    script.write_text(
        "import numpy as np, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_kernels_chaos import _case\n"
        "from vistar.kernels.chaos import pair_stats_ref, pair_stats_triton\n"
        "masks, depth, pairs = _case(1, n=3, h=16, w=20)\n"
        "for touch, band, block in ((1, 2, 512), (0, 3, 128)):\n"
        "    got = pair_stats_triton(masks, depth, pairs, touch, band, device='cpu', block=block)\n"
        "    want = pair_stats_ref(masks, depth, pairs, touch, band)\n"
        "    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)\n"
        "    assert want[:, 8].sum() > 0\n"
        "print('ok')\n")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]
