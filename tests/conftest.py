"""Markers shared by the suite (declared in pyproject.toml, `--strict-markers`): `gpu` tests skip without a CUDA
GPU, `network` tests unless VISTAR_TEST_NETWORK=1, `ray` tests without the ray extra; `slow` ones run unless
deselected (`-m 'not slow'`). The session's caches and homes live in a temporary folder (below)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Ray instances that tests start (ray.init in this process, `vistar score --executor ray` in subprocesses) serve
# this machine only: keep their sockets on 127.0.0.1 (set before any test module imports ray, which reads it then)
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


# Nothing the suite runs may write outside temporary folders: every cache and config folder vistar and its
# libraries derive from the environment (vistar's home and its numba cache, matplotlib's config, XDG caches,
# anything under HOME) points into one session folder, set here before any test module imports vistar. The
# user's downloaded weights and validity photos stay readable: the session home links to those two folders
# where they exist (the suite fills them only as `vistar models fetch` would). Hugging Face lookups keep the
# user's cache, which vistar only reads, and pip keeps the user's configuration (fetch tests download from PyPI).
# tests/test_writes_stay_in_tmp.py checks all of it.
SESSION_HOME = Path(tempfile.mkdtemp(prefix="vistar-test-session-"))


def _redirect_homes() -> None:
    real_home = Path.home()
    user_vistar = Path(os.environ.get("VISTAR_HOME", real_home / ".cache" / "vistar")).expanduser()
    os.environ.setdefault("HF_HOME", str(real_home / ".cache" / "huggingface"))
    pip_conf = next((c for c in (real_home / ".config" / "pip" / "pip.conf", real_home / ".pip" / "pip.conf") if c.is_file()), None)
    if pip_conf is not None:  # fetch tests run `pip download`: keep the user's index settings
        os.environ.setdefault("PIP_CONFIG_FILE", str(pip_conf))
    vistar_home = SESSION_HOME / "vistar-home"
    vistar_home.mkdir()
    for shared in ("models", "validity"):
        if (user_vistar / shared).is_dir():
            (vistar_home / shared).symlink_to(user_vistar / shared, target_is_directory=True)
    os.environ.pop("NUMBA_CACHE_DIR", None)   # numba's cache then follows VISTAR_HOME
    os.environ.update({"HOME": str(SESSION_HOME / "home"), "VISTAR_HOME": str(vistar_home),
                       "XDG_CACHE_HOME": str(SESSION_HOME / "xdg-cache"), "XDG_CONFIG_HOME": str(SESSION_HOME / "xdg-config"),
                       "MPLCONFIGDIR": str(SESSION_HOME / "matplotlib")})


_redirect_homes()


def pytest_unconfigure(config):
    shutil.rmtree(SESSION_HOME, ignore_errors=True)


def _cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config, items):
    reasons = {}
    if any("gpu" in item.keywords for item in items) and not _cuda():
        reasons["gpu"] = "needs a CUDA GPU"
    if os.environ.get("VISTAR_TEST_NETWORK") != "1":
        reasons["network"] = "needs internet access (set VISTAR_TEST_NETWORK=1)"
    if importlib.util.find_spec("ray") is None:
        reasons["ray"] = "needs the ray extra (pip install 'vistar[ray]')"
    for item in items:
        for marker, reason in reasons.items():
            if marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))
