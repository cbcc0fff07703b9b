"""numba kernels compile once per machine: a second process loads the compiled LBP kernel from vistar's cache
folder instead of compiling it again (the ~1 s that every `vistar score` process used to pay on its first GC)."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")
pytestmark = pytest.mark.slow

PROBE = """
import json, numpy as np
from vistar.kernels import lbp
lbp.lbp_codes_numba(np.random.default_rng(0).random((32, 32)))
stats = lbp._NUMBA.stats
print(json.dumps({"hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
"""


def _fresh_process(home):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"VISTAR_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_second_process_loads_the_compiled_kernel_from_the_user_cache(tmp_path):
    first = _fresh_process(tmp_path)
    assert first == {"hits": 0, "misses": 1}          # compiled, and written under VISTAR_HOME
    assert list((tmp_path / "numba").rglob("*.nbi"))
    assert _fresh_process(tmp_path) == {"hits": 1, "misses": 0}   # loaded, not compiled
