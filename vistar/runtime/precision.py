"""The arithmetic a torch stage's model runs in: `features.<stage>.precision`, resolved for the run's device.

- `fp32`: IEEE fp32 (TF32 off: the deterministic baseline every score was validated in).
- `tf32`: fp32 tensors, matmuls and convolutions on TF32 tensor cores (10-bit mantissa). CUDA only: a CPU has no
  TF32, so there it runs, and is recorded as, fp32.
- `bf16` / `fp16`: the forward pass under autocast (post-processing stays fp32).
- `auto` (the default): fp32 on the CPU; on CUDA the stage's entry in `CUDA_DEFAULTS`: the fastest setting whose
  measured effect on scores is inside the tolerance of docs/performance.md ("Precision"), as
  `benchmarks/bench_precision.py` decides it on a GPU. A stage no GPU run has measured yet stays fp32.

The value is a typed field of each torch stage's parameters (`Precision`), so an unknown one stops the run when it
is planned, naming the key. What ran is in each row's key (`key_params`) and in run.json (`stage_precisions`): CPU
fp32 keys are those of runs before `auto` existed, any other precision changes the key. Below features and engine:
stages use it for their forward passes, the engine for keys, run.json and `vistar bench`.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterable, Iterator, Literal

from ..api import FeatureStage, StageContext
from .device import is_cuda

Precision = Literal["auto", "fp32", "tf32", "bf16", "fp16"]   # a torch stage's `precision` parameter
Ran = Literal["fp32", "tf32", "bf16", "fp16"]                  # what a setting runs as on a given device
# stage -> precision chosen on CUDA by benchmarks/bench_precision.py; empty until a GPU run measures it
CUDA_DEFAULTS: dict[str, Ran] = {}


def resolve(value: Precision, stage: str, device: str) -> Ran:
    """What STAGE's `precision: VALUE` runs as on DEVICE."""
    cuda = is_cuda(device)
    ran: Ran = (CUDA_DEFAULTS.get(stage, "fp32") if cuda else "fp32") if value == "auto" else value
    return "fp32" if ran == "tf32" and not cuda else ran


def setting(ctx: StageContext, stage: FeatureStage) -> Precision:
    """STAGE's `features.<name>.precision` as the run's parameters set it (`auto` for a stage without one)."""
    params = ctx.params(stage.name, stage.params) if stage.params is not None else None
    value: Precision = getattr(params, "precision", "auto")
    return value


def stage_precision(ctx: StageContext, stage: FeatureStage) -> Ran:
    """What STAGE's forward passes run in on this run's device."""
    return resolve(setting(ctx, stage), stage.name, ctx.device)


def stage_precisions(stages: Iterable[FeatureStage], ctx: StageContext) -> dict[str, Ran]:
    """What each torch-model stage of the run computed in, for run.json."""
    return {stage.name: stage_precision(ctx, stage) for stage in stages if stage.model_modules is not None}


def key_params(stage: str, block: dict[str, Any], device: str) -> dict[str, Any]:
    """STAGE's raw `features.<stage>` BLOCK (already checked against its parameters) as it is hashed into row keys:
    a given precision as what it resolves to on DEVICE (`auto` on a CPU hashes as the `fp32` it runs, so CPU keys do
    not move), an absent one only when it does not run as fp32."""
    if "precision" not in block and stage not in CUDA_DEFAULTS:
        return block
    ran = resolve(block.get("precision", "auto"), stage, device)
    return {**block, "precision": ran} if "precision" in block or ran != "fp32" else block


def compute(ctx: StageContext, stage: str, value: Precision) -> contextlib.AbstractContextManager[object]:
    """The context STAGE's forward passes run in for `precision: VALUE` on the run's device (a null one for fp32)."""
    ran = resolve(value, stage, ctx.device)
    if ran == "fp32":
        return contextlib.nullcontext()
    if ran == "tf32":
        return _tf32()
    import torch

    dtype = torch.bfloat16 if ran == "bf16" else torch.float16
    return torch.autocast(device_type="cuda" if is_cuda(ctx.device) else "cpu", dtype=dtype)


@contextlib.contextmanager
def _tf32() -> Iterator[None]:
    """TF32 for matmuls and cuDNN convolutions inside the block only: the run's fp32 stages keep full fp32."""
    import torch

    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before
