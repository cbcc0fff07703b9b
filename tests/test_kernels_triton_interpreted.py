"""The LBP Triton kernel against its numpy reference, run by Triton's
interpreter on CPU tensors. The interpreter must be switched on before triton is imported, so one child
process (TRITON_INTERPRET=1) runs the comparison on tiny inputs and reports per kernel."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

_CHILD = textwrap.dedent("""
    import json, traceback
    import numpy as np, torch
    from vistar.kernels import lbp

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
    for name, check in [("lbp", check_lbp)]:
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


@pytest.mark.parametrize("kernel", ["lbp"])
def test_triton_kernel_matches_reference(interpreted, kernel):
    assert interpreted[kernel] == "ok", interpreted[kernel]
