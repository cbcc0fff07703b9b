"""The LBP Triton kernel against its numpy reference, run by Triton's
interpreter on CPU tensors. The interpreter must be switched on before triton is imported, so one child
process (TRITON_INTERPRET=1) runs the comparison on tiny inputs and reports per kernel. A quick check in this
process matches every kernel launch in vistar/kernels to the kernel's parameters, which otherwise only a GPU
(or the slow interpreter) would catch."""
import ast
import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parents[1] / "vistar" / "kernels"
LAUNCH_OPTIONS = {"num_warps", "num_stages", "enable_fp_fusion"}   # triton's own, not the kernel's

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


def launches(source: str) -> list[tuple[str, int, set[str]]]:
    """(kernel name, positional arguments, keyword names) of every `kernel[grid](...)` call in SOURCE."""
    return [(node.func.value.id, len(node.args), {k.arg for k in node.keywords})
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and isinstance(node.func.value, ast.Name)]


def test_every_launch_passes_each_kernel_parameter_once():
    pytest.importorskip("triton", reason="triton is not installed (the `kernels` path needs it)")
    checked = 0
    for launcher, kernels in (("lbp", "_lbp_triton"), ("chaos", "_chaos_triton")):
        module = importlib.import_module(f"vistar.kernels.{kernels}")
        for name, n_positional, keywords in launches((KERNELS / f"{launcher}.py").read_text(encoding="utf-8")):
            params = getattr(module, name).params
            constexprs = {p.name for p in params if p.is_constexpr}
            assert keywords - LAUNCH_OPTIONS <= constexprs, (name, keywords)
            assert n_positional + len(keywords - LAUNCH_OPTIONS) == len(params), (name, n_positional, keywords)
            checked += 1
    assert checked == 4   # lbp_kernel; contact, row_max and band_stats kernels


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["lbp"])
def test_triton_kernel_matches_reference(interpreted, kernel):
    assert interpreted[kernel] == "ok", interpreted[kernel]
