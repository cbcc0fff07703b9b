"""DINOv2 embeddings of the subject in each panel, for CSE subject consistency.

Each found subject becomes a masked crop: the mask's bounding box, pixels outside the mask painted the
processor's mean colour (zero after normalisation, so background cannot make two panels look alike),
padded to a square so the processor's centre crop keeps the whole subject. The crop is cut, filled and
preprocessed as the checkpoint's processor does on the run's device, from the image sent there once (pixel_prep.py;
`preprocess: host` runs the processor on host crops). All crops of a batch of storyboards are embedded together (in
chunks of `batch_size`); the CLS embedding is the vector.
"""
from __future__ import annotations

import numpy as np

from ..api import FeatureStage, StageContext, StageInput, SubjectEmbeddings
from ..runtime import precision
from ..runtime.device import batch_invariant, pixels_to_device, setup_torch, to_device
from .hf_models import EmbedParams, load_pretrained, torch_dtype
from .pixel_prep import centre_crops, masked_square, on_host

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
    host = on_host(params.preprocess, processor)
    crops, owners = [], []
    for i, item in enumerate(batch):
        subject = item.deps["subject_masks"]
        found = np.flatnonzero(subject.found)
        pixels = pixels_to_device(item.image, ctx.device) if len(found) and not host else None
        for k in found:
            crops.append(masked_crop(item.image, subject.masks[k], fill) if host
                         else masked_square(pixels, subject.masks[k], fill))
            owners.append((i, int(k)))
    vectors = []
    with torch.inference_mode(), precision.compute(ctx, "dino_embed", params.precision):
        for start in range(0, len(crops), size):
            chunk = crops[start:start + size]
            values = (to_device(processor(images=chunk, return_tensors="pt")["pixel_values"], ctx.device) if host
                      else centre_crops(chunk, processor))
            vecs = batch_invariant(lambda **x: model(**x).pooler_output, ctx.device, pixel_values=values.to(torch_dtype(dtype)))
            vectors.append(vecs.float().cpu().numpy())
    flat = np.concatenate(vectors) if vectors else np.zeros((0, model.config.hidden_size), np.float32)
    out = [SubjectEmbeddings(np.zeros((len(item.deps["subject_masks"].found), flat.shape[1]), np.float32),
                             np.asarray(item.deps["subject_masks"].found, bool).copy()) for item in batch]
    for (i, k), vec in zip(owners, flat):
        out[i].vectors[k] = vec
    return out


STAGE = FeatureStage(name="dino_embed", version="1", compute=_compute, requires=("subject_masks",), models=(MODEL,),
                     params=EmbedParams, model_modules=lambda ctx: [ctx.cache["dino_embed"][0]])
