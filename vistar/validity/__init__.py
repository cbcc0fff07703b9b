"""Validity sets: each angle's held-out check as one table row per measure.

Why a package: `vistar validate` and the test suite run the same code, so the numbers in docs/validity.md are
the numbers a user reproduces. Each angle lives in its own module (`vistar.validity.<angle>`) exposing

    SETS: dict[str, Callable[[int, int], list[ValidityRow]]]   # set name -> run(n, seed)

where `run(n, seed)` generates (or reads, with a manifest) `n` items deterministically from `seed` and returns one
row per measure. Sets must be generated with seeds and parameter ranges that no tuning used.
"""
from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass

ANGLE_MODULES = ("tr", "li", "cpa", "psc", "gc")


@dataclass(frozen=True)
class ValidityRow:
    angle: str
    set: str
    n: int
    measure: str
    value: float
    goal: str          # human-readable goal, e.g. ">= 0.95" or "<= 10 deg"
    met: bool
    note: str = ""     # cause of a shortfall, or what the set contains

    def record(self) -> dict:
        return asdict(self)


def sets_for(angle: str) -> dict:
    """The validity sets of ANGLE; empty when its module is not installed (a missing optional dependency)."""
    try:
        module = importlib.import_module(f"vistar.validity.{angle.lower()}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("vistar.validity"):
            return {}
        raise
    return dict(module.SETS)
