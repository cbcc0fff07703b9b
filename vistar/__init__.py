"""vistar: deterministic computer-vision metric engine for text-to-image evaluation.

`from vistar import Scorer` scores images from Python (docs/api.md). The public names load on first use (PEP 562),
so `import vistar` stays cheap for the CLI and for code that only needs a submodule.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .scoring import Result, Results, Scorer

__all__ = ["Result", "Results", "Scorer", "__version__"]
_LAZY = {"Result": "vistar.scoring", "Results": "vistar.scoring", "Scorer": "vistar.scoring"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("vistar")
        except PackageNotFoundError:  # running from a source tree without install
            return "0.0.0+src"
    raise AttributeError(f"module 'vistar' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
