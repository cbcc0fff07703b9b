"""The arithmetic a torch stage's model runs in: `features.<stage>.precision`, resolved for the run's device.

- `fp32`: IEEE fp32 (TF32 off: the deterministic baseline every score was validated in).
- `tf32`: fp32 tensors, matmuls and convolutions on TF32 tensor cores (10-bit mantissa). CUDA only: a CPU has no
  TF32, so there it runs, and is recorded as, fp32.
- `bf16` / `fp16`: the forward pass under autocast (post-processing stays fp32).
- `auto` (the ontology's default): fp32 on the CPU; on CUDA the stage's entry in `CUDA_DEFAULTS`: the fastest
  setting whose measured effect on scores is inside the tolerance of docs/performance.md ("Precision"), as
  `benchmarks/bench_precision.py` decides it on a GPU. A stage no GPU run has measured yet stays fp32.

What ran is in each row's key (`key_params`) and in run.json (`stage_precisions`): CPU fp32 keys are those of
runs before `auto` existed, any other precision changes the key.
"""
from __future__ import annotations

import contextlib

from ..api import StageContext
from . import registry

PRECISIONS = ("auto", "fp32", "tf32", "bf16", "fp16")
# stage -> precision chosen on CUDA by benchmarks/bench_precision.py; empty until a GPU run measures it
CUDA_DEFAULTS: dict[str, str] = {}


def resolve(value: object, stage: str, device: str) -> str:
    """What `features.<stage>.precision: VALUE` runs as on DEVICE (fp32, tf32, bf16 or fp16)."""
    value = str(value)
    if value not in PRECISIONS:
        raise ValueError(f"features.{stage}.precision must be one of {', '.join(PRECISIONS)}, not {value!r}")
    cuda = str(device).startswith("cuda")
    if value == "auto":
        value = CUDA_DEFAULTS.get(stage, "fp32") if cuda else "fp32"
    return "fp32" if value == "tf32" and not cuda else value


def stage_precision(ctx: StageContext, stage: str) -> str:
    return resolve(ctx.params(stage).get("precision", "auto"), stage, ctx.device)


def stage_precisions(stages, ctx: StageContext) -> dict[str, str]:
    """What each torch-model stage of the run computed in, for run.json."""
    return {name: stage_precision(ctx, name) for name in stages if registry.feature_stage(name).model_modules is not None}


def key_params(stage: str, params: dict, device: str) -> dict:
    """The stage's parameters as they are hashed into row keys: a given precision as what it resolves to on DEVICE
    (`auto` on a CPU hashes as the `fp32` it runs, so CPU keys do not move), an absent one only when it is not fp32."""
    if "precision" not in params and stage not in CUDA_DEFAULTS:
        return params
    ran = resolve(params.get("precision", "auto"), stage, device)
    return {**params, "precision": ran} if "precision" in params or ran != "fp32" else params


def compute(ctx: StageContext, stage: str):
    """The context a stage's forward passes run in for its resolved precision (a null context for fp32)."""
    wanted = stage_precision(ctx, stage)
    if wanted == "fp32":
        return contextlib.nullcontext()
    if wanted == "tf32":
        return _tf32()
    import torch

    dtype = torch.bfloat16 if wanted == "bf16" else torch.float16
    return torch.autocast(device_type="cuda" if str(ctx.device).startswith("cuda") else "cpu", dtype=dtype)


@contextlib.contextmanager
def _tf32():
    """TF32 for matmuls and cuDNN convolutions inside the block only: the run's fp32 stages keep full fp32."""
    import torch

    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before
