"""Triton kernels (masked means, depth geometry, LBP) against their numpy references, run by Triton's
interpreter on CPU tensors. The interpreter must be switched on before triton is imported, so one child
process (TRITON_INTERPRET=1) runs every comparison on tiny inputs and reports per kernel."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent("""
    import json, traceback
    import numpy as np, torch
    from vistar.kernels import depth_geometry as dg, lbp, masked_means as mm

    def check_masked_means():
        rng = np.random.default_rng(0)
        for b, k, c, h, w in [(2, 3, 1, 5, 7), (1, 2, 3, 9, 4)]:
            v, m = rng.normal(size=(b, c, h, w)), rng.random((b, k, h, w)) < 0.4
            m[0, 0] = False                                   # empty mask → NaN, count 0
            ref_means, ref_counts = mm.masked_means_ref(v, m)
            means, counts = mm.masked_means_triton(torch.tensor(v), torch.tensor(m), block=16)
            np.testing.assert_allclose(means.numpy(), ref_means, rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(counts.numpy(), ref_counts)
            means, _ = mm.masked_means_triton(torch.tensor(v[:, 0]), torch.tensor(m), block=16)
            np.testing.assert_allclose(means.numpy(), mm.masked_means_ref(v[:, 0], m)[0], rtol=1e-5, atol=1e-6)

    def check_depth_geometry():
        rng = np.random.default_rng(1)
        # (1, 5, 6) and (1, 4, 9): too small for an interior, so the mirrored border enters the mean
        for shape, window in [((2, 13, 17), 5), ((1, 9, 7), 4), ((2, 6, 5), 3), ((1, 2, 4), 1), ((1, 5, 6), 5),
                              ((1, 4, 9), 3)]:
            d = rng.random(shape).cumsum(axis=1)
            disp, curv = dg.depth_cues_triton(torch.tensor(d), window, block=64)
            for i in range(shape[0]):
                ref_disp, ref_curv = dg.depth_cues_ref(d[i], window)
                assert abs(float(disp[i]) - ref_disp) < 1e-5, (shape, window, float(disp[i]), ref_disp)
                assert abs(float(curv[i]) - ref_curv) < 1e-5 * max(1.0, ref_curv), (shape, float(curv[i]), ref_curv)
        y, x = np.mgrid[0:12, 0:15].astype(float)
        disp, curv = dg.depth_cues_triton(torch.tensor(0.3 + 0.01 * x - 0.02 * y), 5, block=64)   # plane
        assert float(disp) < 1e-5 and float(curv) < 1e-5, (float(disp), float(curv))

    def check_lbp():
        rng = np.random.default_rng(2)
        images = np.stack([rng.integers(0, 3, (9, 12)), rng.integers(0, 256, (9, 12))]).astype(np.uint8)
        for method in ("uniform", "default"):
            for tiles, border in ((3, 1), (4, 0), (5, 2)):        # (5, 2): more tiles than inner rows
                codes, hist = lbp.lbp_triton(torch.tensor(images), tiles, method, border, block=64)
                for i in range(len(images)):
                    ref = lbp.lbp_codes_ref(images[i], method)
                    np.testing.assert_array_equal(codes[i].numpy(), ref)
                    np.testing.assert_array_equal(hist[i].numpy(),
                                                  lbp.tile_histograms_ref(ref, tiles, lbp.METHODS[method], border))

    results = {}
    for name, check in [("masked_means", check_masked_means), ("depth_geometry", check_depth_geometry),
                        ("lbp", check_lbp)]:
        try:
            check()
            results[name] = "ok"
        except Exception:
            results[name] = traceback.format_exc()
    print(json.dumps(results))
""")


@pytest.fixture(scope="module")
def interpreted():
    pytest.importorskip("triton", reason="triton is not installed (the `kernels` path needs it)")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kernel", ["masked_means", "depth_geometry", "lbp"])
def test_triton_kernel_matches_reference(interpreted, kernel):
    assert interpreted[kernel] == "ok", interpreted[kernel]
