"""Loading a catalogued transformers model and its processor through the model layer.

The weight path comes from `resolve_weight` (so a missing weight raises `MissingWeightError`, which the
engine turns into skipped rows naming the weight), the load is recorded with its sha256 for `run.json`,
and nothing is ever fetched: `local_files_only` stays on even when the path is an HF cache snapshot.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..api import StageContext
from ..models import load_model
from ..runtime.precision import Precision
from .pixel_prep import Preprocess

DType = Literal["float32", "bfloat16", "float16"]   # a transformers stage's `dtype` parameter


@dataclass(frozen=True)
class EmbedParams:
    """`features.clip_embed` and `features.dino_embed`: weights' dtype, images per forward pass, the arithmetic of the
    forward pass (runtime/precision.py), where the processor's resize and normalisation run (pixel_prep.py)."""

    dtype: DType = "float32"
    batch_size: int = 64
    precision: Precision = "auto"
    preprocess: Preprocess = "device"


def torch_dtype(name: str):
    import torch

    dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    if name not in dtypes:
        raise ValueError(f"dtype must be one of {', '.join(dtypes)}, not {name!r}")
    return dtypes[name]


def load_pretrained(name: str, ctx: StageContext, model_cls, processor_cls, dtype: str = "float32"):
    """(model in eval mode on ctx.device, processor) for catalogue entry NAME; a missing weight becomes a
    random-initialised full-size model only when the run asks for it (`vistar bench --random-init`)."""
    def load(path):
        model = model_cls.from_pretrained(path, local_files_only=True, dtype=torch_dtype(dtype)).eval().to(ctx.device)
        return model, processor_cls.from_pretrained(path, local_files_only=True)

    return load_model(name, ctx, load, lambda model, processor: (model.to(ctx.device, torch_dtype(dtype)), processor))


def token_cache(ctx: StageContext, key: str) -> dict:
    """The run's tokenised texts for KEY (a stage's tokeniser and its settings): the same prompt texts come back image
    after image (a suite's storyboards share subjects and shots), and tokenising them is host time for the same
    tensors. Cleared when it grows past 4096 entries, so a long run of distinct texts keeps it small."""
    cache = ctx.cache.setdefault(f"tokens:{key}", {})
    if len(cache) > 4096:
        cache.clear()
    return cache


def pooled(output):
    """transformers 5 returns model outputs from `get_*_features`; older versions return the tensor."""
    return output if hasattr(output, "shape") else output.pooler_output
