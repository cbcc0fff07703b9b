"""Child processes that file permissions bind even when the suite runs as root (as in many containers): root's
CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH are dropped from the child's bounding set before it execs, so a
mode-000 file or a read-only folder refuses it as it would refuse any user."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _drop_file_capabilities() -> None:
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed: cannot test permissions as root")


def python(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python ARGV…` (`-c CODE`, `-m tests.support.engine_plugins score …`) from the repository root, bound by file
    permissions."""
    environ = {**os.environ, "PYTHONPATH": REPO, **(env or {})}
    return subprocess.run([sys.executable, *argv], cwd=REPO, env=environ, capture_output=True, text=True,
                          preexec_fn=_drop_file_capabilities, timeout=300)
