"""Shared backend tests for the kernel dispatchers (which accelerated paths are usable for an input)."""
from __future__ import annotations

import importlib.util
import os
from functools import lru_cache


def is_cuda_tensor(x) -> bool:
    """A torch tensor living on a CUDA device (checked without importing torch for numpy inputs)."""
    return type(x).__module__.startswith("torch") and getattr(x, "is_cuda", False)


@lru_cache(maxsize=1)
def numba_available() -> bool:
    return importlib.util.find_spec("numba") is not None


def numba_module():
    """numba, its on-disk cache in vistar's cache folder (`$VISTAR_HOME/numba`) unless NUMBA_CACHE_DIR is set: a
    kernel compiles once per machine and is loaded by every later process (the LBP kernel costs ~1 s to compile),
    even where the installed package folder is read-only and numba's default next-to-source cache is not written."""
    import numba

    if not os.environ.get("NUMBA_CACHE_DIR"):
        from ..models.catalog import vistar_home

        numba.config.CACHE_DIR = str(vistar_home() / "numba")
    return numba


def pick(backends: dict, name: str, kernel: str):
    """The implementation called NAME, or a clear error listing the ones that exist."""
    if name not in backends:
        raise ValueError(f"unknown {kernel} kernel backend '{name}' (auto, {', '.join(backends)})")
    return backends[name]
