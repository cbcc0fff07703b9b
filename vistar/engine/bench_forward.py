"""How much of a torch stage's time is its model: the stage's forward calls, timed inside it and replayed alone.

While a stage runs, hooks on its `model_modules` time every outermost forward call (synchronising the device at
its ends, so asynchronous CUDA work is counted where it runs) and keep the call's inputs. The stage's wall time
outside these calls is its host work (preprocessing, transfers, post-processing, Python); replaying the recorded
calls back to back, on the same device, at the same batch, inputs and precision, is the model's own rate.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator


@dataclass
class ForwardCall:
    module: Any               # a torch.nn.Module (torch loads with the stage, not with this module)
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass
class ForwardRecord:
    calls: list[ForwardCall] = field(default_factory=list)
    model_s: float = 0.0       # wall seconds inside the outermost forward calls
    model_cpu_s: float = 0.0   # this process's CPU seconds inside them (on a shared CPU, what wall time overstates)


def _tensor_shape(call: ForwardCall) -> str | None:
    for value in (*call.args, *call.kwargs.values()):
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            return "x".join(str(d) for d in value.shape)
    return None


def input_shapes(record: ForwardRecord) -> list[str]:
    """Each module's first tensor input shape, batch first (e.g. `CLIPVisionTransformer 8x3x224x224`), once each."""
    seen: dict[str, None] = {}
    for call in record.calls:
        shape = _tensor_shape(call)
        if shape:
            seen.setdefault(f"{type(call.module).__name__} {shape}", None)
    return list(seen)


@contextlib.contextmanager
def recording(modules: list[Any], sync: Callable[[], None]) -> Iterator[ForwardRecord]:
    """Record the forward calls of MODULES made inside the block; nested calls count once, in the outermost."""
    record = ForwardRecord()
    depth = [0]
    started = [0.0, 0.0]

    def pre(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if depth[0] == 0:
            sync()
            record.calls.append(ForwardCall(module, args, dict(kwargs)))
            started[:] = time.perf_counter(), time.process_time()
        depth[0] += 1

    def post(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
        depth[0] -= 1
        if depth[0] == 0:
            sync()
            record.model_s += time.perf_counter() - started[0]
            record.model_cpu_s += time.process_time() - started[1]

    handles = [h for m in modules for h in (m.register_forward_pre_hook(pre, with_kwargs=True),
                                           m.register_forward_hook(post, with_kwargs=True))]
    try:
        yield record
    finally:
        for h in handles:
            h.remove()


def replay_seconds(record: ForwardRecord, context: Callable[[], Any], sync: Callable[[], None], repeats: int = 1) -> float:
    """Fastest of REPEATS back-to-back replays of the recorded calls, in CONTEXT (the stage's precision) without
    autograd: the model's time for the same work with no host work between the calls."""
    import torch

    best = float("inf")
    for _ in range(max(1, repeats)):
        with torch.inference_mode(), context():
            sync()
            start = time.perf_counter()
            for call in record.calls:
                call.module(*call.args, **call.kwargs)
            sync()
        best = min(best, time.perf_counter() - start)
    return best
