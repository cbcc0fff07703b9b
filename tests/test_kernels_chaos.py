"""Chaos pair statistics: numba and Triton (interpreter) against the numpy reference, and hand-counted sets."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vistar.kernels.chaos import MAX_LAUNCH_PX, launch_chunks, pair_stats, pair_stats_numba, pair_stats_ref


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


_CHILD = """
import json, sys, traceback
import numpy as np
sys.path.insert(0, {tests!r})
from test_kernels_chaos import _case
from vistar.kernels.chaos import pair_stats_ref, pair_stats_triton

def check_reference():
    masks, depth, pairs = _case(1, n=3, h=16, w=20)
    for touch, band, block in ((1, 2, 512), (0, 3, 128)):
        got = pair_stats_triton(masks, depth, pairs, touch, band, device='cpu', block=block)
        np.testing.assert_allclose(got, pair_stats_ref(masks, depth, pairs, touch, band), rtol=1e-12, atol=1e-9)
        assert got[:, 8].sum() > 0

def check_split_launches():
    # 6 pairs of 16x20: one launch, then at most 2 pairs (640 pair-pixels) per launch, then one pair per launch
    masks, depth, pairs = _case(3, n=4, h=16, w=20)
    whole = pair_stats_triton(masks, depth, pairs, 1, 2, device='cpu', block=128)
    for max_px in (640, 1):
        np.testing.assert_array_equal(pair_stats_triton(masks, depth, pairs, 1, 2, device='cpu', block=128,
                                                        max_launch_px=max_px), whole)
    np.testing.assert_allclose(whole, pair_stats_ref(masks, depth, pairs, 1, 2), rtol=1e-12, atol=1e-9)

def check_float64_sums():
    # depth ~5000 with fine fractions: float32 input or float32 sums are off by ~1e-4 per pixel
    masks, depth, pairs = _case(4, n=3, h=16, w=20)
    depth = 5000.0 + np.random.default_rng(4).random(depth.shape)
    got = pair_stats_triton(masks, depth, pairs, 1, 2, device='cpu', block=128)
    np.testing.assert_allclose(got, pair_stats_ref(masks, depth, pairs, 1, 2), rtol=1e-12, atol=0)

def check_nonfinite_background():
    # an inf or NaN depth pixel outside every mask: the reference's sums stay finite, so must the kernel's
    masks, depth, pairs = _case(1, n=3, h=16, w=20)
    y, x = np.argwhere(~masks.any(0))[0]
    for bad in (np.inf, np.nan):
        d = depth.astype(np.float64)
        d[y, x] = bad
        want = pair_stats_ref(masks, d, pairs, 1, 2)
        assert np.isfinite(want).all()
        got = pair_stats_triton(masks, d, pairs, 1, 2, device='cpu', block=128)
        assert np.isfinite(got).all(), got
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)

def check_mask_index_past_2_31():
    # mask index x H*W = 2^31, which wraps negative in int32: the mask buffer is 2 GiB of address space, of which
    # only the two rows the pair reads are written (the rest is never touched, so never backed by memory)
    import torch
    from vistar.kernels.chaos import N_STATS, dilate
    from vistar.kernels._chaos_triton import band_stats_kernel, contact_kernel, row_max_kernel
    h, w = 8, 8
    far = 2 ** 31 // (h * w)
    masks, depth, _ = _case(5, n=2, h=h, w=w)
    masks_t, dil_t = torch.empty((far + 1) * h * w, dtype=torch.int8), torch.empty((far + 1) * h * w, dtype=torch.int8)
    for row, k in ((0, 0), (far, 1)):
        masks_t[row * h * w:(row + 1) * h * w] = torch.from_numpy(masks[k].ravel().astype(np.int8))
        dil_t[row * h * w:(row + 1) * h * w] = torch.from_numpy(dilate(masks[k], 1).ravel().astype(np.int8))
    pairs_t = torch.tensor([[0, far]], dtype=torch.int32)
    contact, rows = torch.empty((1, h * w), dtype=torch.int8), torch.empty((1, h * w), dtype=torch.int8)
    partial = torch.zeros((1, 1, N_STATS), dtype=torch.float64)
    contact_kernel[(1, 1)](masks_t, dil_t, pairs_t, contact, h * w, BLOCK=64)
    row_max_kernel[(1, 1)](contact, rows, h, w, 2, BLOCK=64)
    band_stats_kernel[(1, 1)](masks_t, rows, contact, torch.from_numpy(depth.astype(np.float64)), pairs_t, partial,
                              h, w, 1, 2, BLOCK=64)
    want = pair_stats_ref(masks, depth, np.array([[0, 1]]), 1, 2)[0]
    assert want[8] > 0
    np.testing.assert_allclose(partial.numpy()[0, 0], want, rtol=1e-12, atol=1e-9)

CHECKS = {{"reference": check_reference, "split_launches": check_split_launches, "float64_sums": check_float64_sums,
          "nonfinite_background": check_nonfinite_background, "mask_index_past_2_31": check_mask_index_past_2_31}}
results = {{}}
for name in sys.argv[1:]:
    try:
        CHECKS[name]()
        results[name] = "ok"
    except Exception:
        results[name] = traceback.format_exc()
print(json.dumps(results))
"""
IN_ONE_CHILD = ["reference", "split_launches", "float64_sums", "nonfinite_background"]


def _interpret(checks: list[str]) -> dict[str, str]:
    """Runs CHECKS in a subprocess: TRITON_INTERPRET must be set before triton is imported."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", _CHILD.format(tests=str(Path(__file__).parent)), *checks], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def interpreted():
    pytest.importorskip("triton")
    return _interpret(IN_ONE_CHILD)


@pytest.mark.slow
@pytest.mark.parametrize("check", IN_ONE_CHILD)
def test_triton_in_interpreter(interpreted, check):
    assert interpreted[check] == "ok", interpreted[check]


@pytest.mark.slow
def test_triton_mask_offsets_past_2_31_in_interpreter():
    """Alone in its child: int32 offsets there address memory before the buffer, which may crash the process."""
    pytest.importorskip("triton")
    result = _interpret(["mask_index_past_2_31"])["mask_index_past_2_31"]
    assert result == "ok", result


def test_launch_chunks_cover_every_pair_within_the_limit():
    for n_pairs, hw, max_px in ((7, 10, 30), (6, 10, 30), (5, 100, 30), (1, 10, 10), (4950, 1024 * 1024, MAX_LAUNCH_PX)):
        chunks = launch_chunks(n_pairs, hw, max_px)
        assert [c[0] for c in chunks] == [0] + [c[1] for c in chunks[:-1]] and chunks[-1][1] == n_pairs
        assert all(stop > start for start, stop in chunks)
        assert all((stop - start) * hw <= max(max_px, hw) for start, stop in chunks)
    assert launch_chunks(7, 10, 30) == [(0, 3), (3, 6), (6, 7)]
    assert launch_chunks(3, 100, 30) == [(0, 1), (1, 2), (2, 3)]     # one image over the limit: a pair a launch
    assert max(stop - start for start, stop in launch_chunks(4950, 1024 * 1024)) * 1024 * 1024 < 2 ** 31
