"""Markers shared by the suite (declared in pyproject.toml, `--strict-markers`): `gpu` tests skip without a CUDA
GPU, `network` tests unless VISTAR_TEST_NETWORK=1, `ray` tests without the ray extra; `slow` ones run unless
deselected (`-m 'not slow'`)."""
from __future__ import annotations

import importlib.util
import os

import pytest

# Ray instances that tests start (ray.init in this process, `vistar score --executor ray` in subprocesses) serve
# this machine only: keep their sockets on 127.0.0.1 (set before any test module imports ray, which reads it then)
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


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
