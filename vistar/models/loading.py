"""The one model-loading sequence every stage uses: find the weight, load it, record what was loaded.

A missing weight raises `MissingWeightError` (the engine turns it into skipped rows naming the weight),
except when the run asked for random-initialised stand-ins (`vistar bench --random-init`): then the
catalogue's recipe builds a full-size model with random weights, recorded as such instead of a sha256. At the tiny
model scale (`vistar bench --model-scale tiny`) the recipe's small variant replaces every model, weights or not.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from . import random_init
from .catalog import resolve_weight
from .errors import MissingWeightError
from .provenance import record_loaded

T = TypeVar("T")


def load_model(name: str, ctx: Any, load: Callable[[Any], T], from_random: Callable[[Any, Any], T] | None = None,
               recorded: Callable[[Any], Any] | None = None) -> T:
    """`load(path)` for catalogue entry NAME's weight (from `ctx.model_paths` or the model folder), then recorded
    with the sha256 of `recorded(path)` (default: the path; e.g. the one weight file inside a folder). With a
    missing weight on a random-init run, `from_random(model, processor)` of the recipe's random model instead; a
    stage that gives no `from_random` has no random stand-in and raises. `ctx` is the run's `StageContext`."""
    if from_random is not None and random_init.always(ctx.options):   # a tiny scale: never the real weight
        return from_random(*random_init.build_recorded(name, ctx.device, ctx.options))
    try:
        path = resolve_weight(name, ctx.model_paths)
    except MissingWeightError:
        if from_random is None or not ctx.options.random_init:   # random weights only when the run asked for them
            raise
        return from_random(*random_init.build_recorded(name, ctx.device, ctx.options))
    loaded = load(path)
    record_loaded(name, recorded(path) if recorded else path)
    return loaded
