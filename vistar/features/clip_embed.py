"""CLIP embeddings of every panel and of every sub-prompt (`shots`), for CSE coverage.

All panel crops of a batch of storyboards go through the image tower together, and all sub-prompts of
the batch through the text tower together (in chunks of `batch_size`), so a 4-panel storyboard costs a
quarter of a forward pass's batch, not four passes. Panels are preprocessed as the checkpoint's own processor
does (shortest side resized, centre crop), as CLIP was trained, on the run's device from the image sent there once
(pixel_prep.py; `preprocess: host` runs the processor itself on host arrays).
"""
from __future__ import annotations

import numpy as np

from ..api import ClipEmbeddings, FeatureStage, StageContext, StageInput
from ..runtime import precision
from ..runtime.device import batch_invariant, pixels_to_device, setup_torch, to_device
from .hf_models import EmbedParams, load_pretrained, pooled, token_cache, torch_dtype
from .pixel_prep import centre_crops, on_host

MODEL = "clip-vit-large-patch14"


def shots_of(controls: dict) -> list[str]:
    """The sub-prompts: the `shots` list (a single string counts as one shot)."""
    shots = controls.get("shots")
    if shots is None or shots == "" or shots == []:
        raise ValueError("control 'shots': CSE needs the list of sub-prompts, e.g. shots=[\"...\", \"...\"]")
    return [str(s) for s in shots] if isinstance(shots, list) else [str(shots)]


def _chunks(items: list, size: int):
    for i in range(0, len(items), max(1, size)):
        yield items[i:i + size]


def _tokens(texts: list[str], tokenizer, max_tokens: int, cache: dict, device: str) -> dict:
    """The tokenizer's tensors for TEXTS (the processor's text half, called alone), each distinct text tokenised once
    per run: padded to MAX_TOKENS, a text's row never depends on the others, so rows from CACHE concatenate to the
    batch's own result (tests/test_pixel_prep.py)."""
    import torch

    missing = [t for t in dict.fromkeys(texts) if t not in cache]
    if missing:
        encoded = tokenizer(missing, padding="max_length", truncation=True, max_length=max_tokens, return_tensors="pt")
        for j, text in enumerate(missing):
            cache[text] = {k: to_device(v[j:j + 1], device) for k, v in encoded.items()}
    return {k: torch.cat([cache[t][k] for t in texts]) for k in cache[texts[0]]}


def _compute(batch: list[StageInput], ctx: StageContext) -> list:
    import torch

    params = ctx.params("clip_embed", EmbedParams)
    dtype, size = params.dtype, params.batch_size
    from transformers import CLIPModel, CLIPProcessor
    setup_torch(ctx)
    model, processor = ctx.model("clip_embed", lambda: load_pretrained(MODEL, ctx, CLIPModel, CLIPProcessor, dtype))
    host = on_host(params.preprocess, processor.image_processor)
    outputs: list = [None] * len(batch)
    crops, texts, owners = [], [], []
    for i, item in enumerate(batch):
        try:
            shots = shots_of(item.controls)
        except ValueError as exc:
            outputs[i] = exc
            continue
        layout = item.deps["panels"]
        if host:
            crops += layout.crops(item.image)
        else:
            pixels = pixels_to_device(item.image, ctx.device)
            crops += [pixels[:, y0:y1, x0:x1] for x0, y0, x1, y1 in layout.boxes]
        texts += shots
        owners.append((i, len(layout), len(shots)))
    image_vecs, text_vecs = [], []
    max_tokens = model.config.text_config.max_position_embeddings   # fixed padding: same result in any batch
    with torch.inference_mode(), precision.compute(ctx, "clip_embed", params.precision):
        for chunk in _chunks(crops, size):
            values = (to_device(processor(images=chunk, return_tensors="pt")["pixel_values"], ctx.device) if host
                      else centre_crops(chunk, processor.image_processor)).to(torch_dtype(dtype))
            vecs = batch_invariant(lambda **x: pooled(model.get_image_features(**x)), ctx.device, pixel_values=values)
            image_vecs.append(vecs.float().cpu().numpy())
        for chunk in _chunks(texts, size):
            tokens = _tokens(chunk, processor.tokenizer, max_tokens, token_cache(ctx, "clip_embed"), ctx.device)
            vecs = batch_invariant(lambda **x: pooled(model.get_text_features(**x)), ctx.device, **tokens)
            text_vecs.append(vecs.float().cpu().numpy())
    image_all = np.concatenate(image_vecs) if image_vecs else np.zeros((0, 0), np.float32)
    text_all = np.concatenate(text_vecs) if text_vecs else np.zeros((0, 0), np.float32)
    pi = ti = 0
    for i, n, m in owners:
        outputs[i] = ClipEmbeddings(image_all[pi:pi + n], text_all[ti:ti + m], tuple(texts[ti:ti + m]))
        pi, ti = pi + n, ti + m
    return outputs


def _model_modules(ctx: StageContext) -> list:
    model, _ = ctx.cache["clip_embed"]
    return [model.vision_model, model.visual_projection, model.text_model, model.text_projection]


STAGE = FeatureStage(name="clip_embed", version="1", compute=_compute, requires=("panels",), models=(MODEL,),
                     params=EmbedParams, model_modules=_model_modules)
