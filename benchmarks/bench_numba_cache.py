"""First-call cost of vistar's numba kernels in a fresh process, with an empty cache and with the cache that the
first process wrote, against a warm call.

    python benchmarks/bench_numba_cache.py

Each line runs a new Python process (so nothing is shared in memory) with VISTAR_HOME pointing at a temporary
folder: `empty cache` compiles, `cached` loads what the previous process wrote to `$VISTAR_HOME/numba`. Importing numba is
timed apart. Inputs: a 256² image for LBP (GC's texture cue), two 256² masks for chaos (PSC).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

PROBE = """
import json, time
import numpy as np
t = time.perf_counter()
import numba
import_ms = 1000 * (time.perf_counter() - t)
from vistar.kernels import chaos, lbp
image = np.random.default_rng(0).random((256, 256))
masks = np.zeros((2, 256, 256), bool); masks[0, 40:140, 40:140] = True; masks[1, 130:220, 60:160] = True
depth = np.random.default_rng(1).random((256, 256))
calls = {"lbp": lambda: lbp.lbp_codes_numba(image),
         "chaos": lambda: chaos.pair_stats_numba(masks, depth, np.array([[0, 1]]), 2, 6)}
out = {}
for name, call in calls.items():
    t = time.perf_counter(); call(); first = time.perf_counter() - t
    warm = min((lambda t0: (call(), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(5))
    out[name] = (1000 * first, 1000 * warm)
print(json.dumps({"import numba": (import_ms, None), **out}))
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"VISTAR_HOME": home}
        print(f"{'kernel':12} {'process':12} {'first call ms':>14} {'warm call ms':>13}")
        for label in ("empty cache", "cached"):
            done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
            for name, (first, warm) in json.loads(done.stdout.strip().splitlines()[-1]).items():
                print(f"{name:12} {label:12} {first:14.1f} {'' if warm is None else f'{warm:13.2f}'}")


if __name__ == "__main__":
    main()
