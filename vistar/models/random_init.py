"""Random-initialised full-size models, for benchmarking on machines without the pretrained checkpoints.

A catalogue entry's `random_init` block (vistar/data/models.yaml) names the architecture and the exact
hyper-parameters of the real checkpoint, so the random model has the same parameter count and FLOPs; its
outputs are meaningless. Loaders fall back to it only when the weight is missing AND the run options ask for
it (`random_init: true`, set by `vistar bench --random-init`; `run_score` refuses that option). The load is
recorded in run provenance with `random_init: true` and no sha256.

Scale (`model_scale` option, `vistar bench --model-scale`): `full` (the default) is the checkpoint's size; `tiny`
merges the block's `tiny` overrides over it (same architecture and processor, so the same input sizes and the same
host work around the model, a few layers of small width) and is used even where the real weight exists, so a CPU
measures the stages' host work in seconds. An entry without a `tiny` block builds its full size at either scale.

Entry fields by `builder`:
- transformers: `model` and `config` (class names in `transformers`), `params` (config keyword arguments),
  optional `processor`: {class, kwargs, image_processor: {class, kwargs}, tokenizer: {class, vocabulary}}.
  Tokenizers are built offline from a generated vocabulary (`byte-bpe`: every byte as a token, `wordpiece`:
  printable ASCII characters): token counts differ from the real vocabulary, padded lengths do not.
- ultralytics: `config`, the model YAML ultralytics ships (e.g. yolov8l-seg.yaml).
- torchvision: `model`, a constructor in `torchvision.models`.
- vistar: `model`, a network class written out in vistar (`MODULE:CLASS` under `vistar.`, e.g.
  `features.efficientnet_lite:EfficientNetLite0`), built with no arguments.
"""
from __future__ import annotations

import contextlib
import string

from ..api import DEFAULT_SEED, RunOptions
from .catalog import spec
from .provenance import record_random


def wanted(options: RunOptions) -> bool:
    """Whether the run asked for random weights in place of missing ones (a tiny scale always runs on them)."""
    return options.random_init or options.model_scale == "tiny"


def always(options: RunOptions) -> bool:
    """Whether random weights replace even the weights that exist: a tiny scale has no checkpoint of its own."""
    return options.model_scale == "tiny"


def recipe(name: str, model_scale: str = "full") -> dict:
    """The `random_init` block of catalogue entry NAME at MODEL_SCALE (KeyError when it has none)."""
    block = spec(name).random_init
    if not block:
        raise KeyError(f"model '{name}' has no random_init entry in the catalogue")
    full = {k: v for k, v in block.items() if k != "tiny"}
    return _merged(full, block.get("tiny") or {}) if model_scale == "tiny" else full


def _merged(base: dict, over: dict) -> dict:
    """BASE with OVER's values, nested dicts merged key by key (a config's sub-config keeps what OVER leaves)."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def build_random(name: str, seed: int = DEFAULT_SEED, device: str = "cpu", model_scale: str = "full"):
    """(model, processor or None): NAME's architecture at MODEL_SCALE with seeded random weights, built on DEVICE
    ("meta" builds the structure without allocating it; ultralytics models are always built on the CPU)."""
    import torch

    block = recipe(name, model_scale)
    builder = block.get("builder")
    if builder not in _BUILDERS:
        raise ValueError(f"model '{name}': unknown random_init builder {builder!r} (known: {sorted(_BUILDERS)})")
    cuda = [torch.device(device).index or 0] if str(device).startswith("cuda") else []
    with torch.random.fork_rng(devices=cuda):   # seeded here, without disturbing the caller's generator
        torch.manual_seed(seed)
        if cuda:
            torch.cuda.manual_seed(seed)
        model, processor = _BUILDERS[builder](block, device)
    return model.eval() if hasattr(model, "eval") else model, processor


def build_recorded(name: str, device: str, options: RunOptions):
    """`build_random` with the run's seed and scale, recorded in provenance as random-initialised."""
    model, processor = build_random(name, options.seed, device, options.model_scale)
    record_random(name, options.seed, recipe(name).get("builder", ""), options.model_scale)
    return model, processor


def _on(device: str):
    import torch

    return torch.device(device) if device else contextlib.nullcontext()


def _transformers(block: dict, device: str):
    import transformers

    config = getattr(transformers, block["config"])(**(block.get("params") or {}))
    with _on(device):
        model = getattr(transformers, block["model"])(config)
    return model, _processor(block.get("processor"))


def _processor(block: dict | None):
    if not block:
        return None
    import transformers

    parts = {}
    if "image_processor" in block:
        sub = block["image_processor"]
        parts["image_processor"] = getattr(transformers, sub["class"])(**(sub.get("kwargs") or {}))
    if "tokenizer" in block:
        sub = block["tokenizer"]
        parts["tokenizer"] = getattr(transformers, sub["class"])(**_VOCABULARIES[sub["vocabulary"]]())
    return getattr(transformers, block["class"])(**parts, **(block.get("kwargs") or {}))


def _byte_bpe() -> dict:
    """Byte-level BPE vocabulary without merges: every byte a token, alone or word-final (CLIP's `</w>`)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = list(bytes_to_unicode().values())
    tokens = symbols + [s + "</w>" for s in symbols] + ["<|startoftext|>", "<|endoftext|>"]
    return {"vocab": {t: i for i, t in enumerate(tokens)}, "merges": []}


def _wordpiece() -> dict:
    """WordPiece vocabulary of printable ASCII characters, word-initial and continuation (`##`)."""
    chars = [c for c in string.printable if not c.isspace()]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + ["##" + c for c in chars]
    return {"vocab": {t: i for i, t in enumerate(tokens)}}


_VOCABULARIES = {"byte-bpe": _byte_bpe, "wordpiece": _wordpiece}


def _ultralytics(block: dict, device: str):
    import os

    os.environ.setdefault("YOLO_AUTOINSTALL", "false")
    os.environ.setdefault("YOLO_OFFLINE", "true")
    from ultralytics import YOLO

    return YOLO(block["config"], task=block.get("task", "segment")), None  # the build runs a CPU forward for strides


def _torchvision(block: dict, device: str):
    import torchvision

    with _on(device):
        return getattr(torchvision.models, block["model"])(weights=None), None


def _vistar(block: dict, device: str):
    import importlib

    module, name = block["model"].split(":")
    with _on(device):
        return getattr(importlib.import_module(f"vistar.{module}"), name)(), None


_BUILDERS = {"transformers": _transformers, "ultralytics": _ultralytics, "torchvision": _torchvision, "vistar": _vistar}
