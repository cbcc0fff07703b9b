"""Validity sets: each angle's held-out check as one table row per measure.

Why a package: `vistar validate` and the test suite run the same code, so the numbers in docs/validity.md are
the numbers a user reproduces. Each angle lives in its own module (`vistar.validity.<angle>`) exposing

    SETS: dict[str, Callable[[int, int], list[ValidityRow]]]   # set name -> run(n, seed)

where `run(n, seed)` generates (or reads, with a manifest) `n` items deterministically from `seed` and returns one
row per measure. Sets must be generated with seeds and parameter ranges that no tuning used. A module may also
define `FULL_N: dict[str, int]`, the size its documented numbers use (else `DEFAULT_N`).
"""
from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass

ANGLE_MODULES = ("tr", "li", "cpa", "psc", "gc")
DEFAULT_N = 40


@dataclass(frozen=True)
class ValidityRow:
    angle: str
    set: str
    n: int
    measure: str
    value: float
    goal: str          # human-readable goal, e.g. ">= 0.95" or "<= 10 deg"
    met: bool
    note: str = ""     # cause of a shortfall (required when not met), or what the set contains

    def __post_init__(self):
        if not self.met and not self.note.strip():  # `vistar validate` prints each unmet goal with its cause
            raise ValueError(f"{self.angle} {self.set}, {self.measure}: a goal not met needs its cause in `note`")

    def record(self) -> dict:
        return asdict(self)


def _module(angle: str):
    try:
        return importlib.import_module(f"vistar.validity.{angle.lower()}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("vistar.validity"):
            return None
        raise


def sets_for(angle: str) -> dict:
    """The validity sets of ANGLE; empty when its module is not installed (a missing optional dependency)."""
    module = _module(angle)
    return dict(module.SETS) if module else {}


def full_size(angle: str, name: str) -> int:
    """How many items set NAME of ANGLE uses for its documented numbers."""
    module = _module(angle)
    return int(getattr(module, "FULL_N", {}).get(name, DEFAULT_N)) if module else DEFAULT_N
