"""DINOv2 embeddings of the subject in each panel, for CSE subject consistency.

Each found subject becomes a masked crop: the mask's bounding box, pixels outside the mask painted the
processor's mean colour (zero after normalisation, so background cannot make two panels look alike),
padded to a square so the processor's centre crop keeps the whole subject. All crops of a batch of
storyboards are embedded together (in chunks of `batch_size`); the CLS embedding is the vector.
"""
from __future__ import annotations

import numpy as np

from ..api import FeatureStage, StageContext, StageInput, SubjectEmbeddings
from ..runtime.device import autocast, batch_invariant, setup_torch, to_device
from .hf_models import EmbedParams, load_pretrained, torch_dtype

MODEL = "dinov2-large"


def masked_crop(image: np.ndarray, mask: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """Square uint8 crop around `mask`, everything outside the mask set to `fill` (RGB, 0–255)."""
    ys, xs = np.nonzero(mask)
    if len(ys) == 0:
        raise ValueError("empty mask")
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    crop = image[y0:y1, x0:x1].copy()
    crop[~mask[y0:y1, x0:x1]] = fill
    h, w = crop.shape[:2]
    side = max(h, w)
    square = np.empty((side, side, 3), np.uint8)
    square[:] = fill
    top, left = (side - h) // 2, (side - w) // 2
    square[top:top + h, left:left + w] = crop
    return square


def _compute(batch: list[StageInput], ctx: StageContext) -> list:
    import torch
    from transformers import AutoImageProcessor, AutoModel

    params = ctx.params("dino_embed", EmbedParams)
    dtype, size = params.dtype, params.batch_size
    setup_torch(ctx)
    model, processor = ctx.model("dino_embed", lambda: load_pretrained(MODEL, ctx, AutoModel, AutoImageProcessor, dtype))
    fill = np.round(np.asarray(processor.image_mean) * 255).astype(np.uint8)
    crops, owners = [], []
    for i, item in enumerate(batch):
        subject = item.deps["subject_masks"]
        for k in np.flatnonzero(subject.found):
            crops.append(masked_crop(item.image, subject.masks[k], fill))
            owners.append((i, int(k)))
    vectors = []
    with torch.inference_mode(), autocast(ctx.device, params.precision):
        for start in range(0, len(crops), size):
            pixels = to_device(processor(images=crops[start:start + size], return_tensors="pt")["pixel_values"], ctx.device)
            vecs = batch_invariant(lambda **x: model(**x).pooler_output, ctx.device, pixel_values=pixels.to(torch_dtype(dtype)))
            vectors.append(vecs.float().cpu().numpy())
    flat = np.concatenate(vectors) if vectors else np.zeros((0, model.config.hidden_size), np.float32)
    out = [SubjectEmbeddings(np.zeros((len(item.deps["subject_masks"].found), flat.shape[1]), np.float32),
                             np.asarray(item.deps["subject_masks"].found, bool).copy()) for item in batch]
    for (i, k), vec in zip(owners, flat):
        out[i].vectors[k] = vec
    return out


STAGE = FeatureStage(name="dino_embed", version="1", compute=_compute, requires=("subject_masks",), models=(MODEL,),
                     params=EmbedParams)
