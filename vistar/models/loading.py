"""The one model-loading sequence every stage uses: find the weight, load it, record what was loaded.

A missing weight raises `MissingWeightError` (the engine turns it into skipped rows naming the weight),
except when the run asked for random-initialised stand-ins (`vistar bench --random-init`): then the
catalogue's recipe builds a full-size model with random weights, recorded as such instead of a sha256.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from . import random_init
from .catalog import resolve_weight
from .errors import MissingWeightError
from .provenance import record_loaded

T = TypeVar("T")


def load_model(name: str, ctx: Any, load: Callable[[Any], T],
               from_random: Callable[[Any, Any], T] | None = None) -> T:
    """`load(path)` for catalogue entry NAME's weight (from `ctx.model_paths` or the model folder), recorded with
    its sha256; with a missing weight on a random-init run, `from_random(model, processor)` of the recipe's
    random model instead (default: the model itself). `ctx` is the run's `StageContext`."""
    try:
        path = resolve_weight(name, ctx.model_paths)
    except MissingWeightError:
        if not random_init.wanted(ctx.options):
            raise
        model, processor = random_init.build_recorded(name, ctx.device, ctx.options)
        return from_random(model, processor) if from_random else model
    loaded = load(path)
    record_loaded(name, path)
    return loaded
