"""Scoring from Python: `Scorer` runs the engine of `vistar score` on images in memory (docs/api.md)."""
from .results import Result, Results
from .scorer import Scorer

__all__ = ["Result", "Results", "Scorer"]
