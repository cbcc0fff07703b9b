"""Where the prompt's recurring subject is in each panel: a box (GroundingDINO) and a mask (SAM).

Cost drives the design: SAM's ViT-H image encoder and GroundingDINO are by far the slowest models of the
suite, so both run once per storyboard image rather than once per panel. GroundingDINO detects the
subject phrase on the whole image; each panel keeps its best detection that lies mostly inside it.
SAM then encodes the whole image once (on a GPU the images of a batch together; on the CPU one at a time, so
a score never depends on the batch size) and its light prompt decoder
turns all panels' boxes into masks from that one encoding. A mask is clipped to its panel; when SAM
returns an empty mask for a detected box the box itself is the mask, and the panel says so.

Both models' inputs are made on the run's device as their processors make them (pixel_prep.py): the raw uint8
image goes there once, from pinned memory, and is resized, normalised and padded there, bit for bit the processors'
result on the CPU (`preprocess: host` runs the processors themselves on host arrays). SAM's image encoder takes the
batch's images in one call and its prompt decoder all their boxes in one call (on CUDA; one image at a time on the
CPU, as `batch_invariant` explains); its masks are upscaled, thresholded and cut to their panels on the device, and
cross to the host once per image.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..api import FeatureStage, StageContext, StageInput, SubjectMasks
from ..runtime import precision
from ..runtime.device import batch_invariant, is_cuda, pixels_to_device, to_device
from ..runtime.precision import Precision
from .hf_models import DType, load_pretrained, token_cache, torch_dtype
from .pixel_prep import Preprocess, on_host, padded

DETECTOR, SEGMENTER = "grounding-dino-tiny", "sam-vit-huge"


@dataclass(frozen=True)
class SubjectMaskParams:
    """`features.subject_masks`."""

    box_threshold: float = 0.35    # GroundingDINO box score threshold (its published default)
    # only ever chose GroundingDINO's label words, which nothing here reads (`_boxes`): no effect, kept for row keys
    text_threshold: float = 0.25
    min_inside: float = 0.5        # a detection belongs to a panel when its centre and this much of its area are inside
    dtype: DType = "float32"       # the weights' storage
    batch_size: int = 8
    precision: Precision = "auto"  # the forward passes' arithmetic (runtime/precision.py)
    preprocess: Preprocess = "device"   # where the processors' resize and normalisation run (pixel_prep.py)


def subject_query(subject: str) -> str:
    """GroundingDINO expects lower-case phrases, each ending with a period."""
    text = " ".join(str(subject).lower().split()).rstrip(".")
    if not text:
        raise ValueError("control 'subject': CSE needs the recurring subject, e.g. subject=\"the red fox\"")
    return text + "."


def assign_to_panels(det_boxes: np.ndarray, det_scores: np.ndarray, panel_boxes: np.ndarray,
                     min_inside: float) -> np.ndarray:
    """Index of the best detection for each panel (−1 if none): its centre inside the panel and at least
    `min_inside` of its area inside too; highest score wins, the earlier detection on a tie."""
    best = np.full(len(panel_boxes), -1)
    det_boxes = np.asarray(det_boxes, dtype=np.float64).reshape(-1, 4)
    for p, (px0, py0, px1, py1) in enumerate(np.asarray(panel_boxes, dtype=np.float64)):
        for d, (x0, y0, x1, y1) in enumerate(det_boxes):
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            if not (px0 <= cx < px1 and py0 <= cy < py1):
                continue
            area = max(x1 - x0, 0.0) * max(y1 - y0, 0.0)
            inter = max(min(x1, px1) - max(x0, px0), 0.0) * max(min(y1, py1) - max(y0, py0), 0.0)
            if area <= 0 or inter / area < min_inside:
                continue
            if best[p] < 0 or det_scores[d] > det_scores[best[p]]:
                best[p] = d
    return best


def _detect(images: list, arrays: list[np.ndarray], queries: list[str], model, processor, p: SubjectMaskParams, ctx: StageContext):
    """[(boxes (k, 4), scores (k,))] per image; images of one size go through together (on CUDA). IMAGES: the
    (3, H, W) uint8 tensors on the device, or None to run the processor itself on the host ARRAYS."""
    import torch

    results: list = [None] * len(arrays)
    groups: dict[tuple, list[int]] = {}
    for i, image in enumerate(arrays):
        groups.setdefault(image.shape[:2], []).append(i)
    step = int(p.batch_size) if is_cuda(ctx.device) else 1  # CPU: one image per call, see batch_invariant
    for shape, members in sorted(groups.items()):
        for start in range(0, len(members), step):
            idx = members[start:start + step]
            text = [queries[i] for i in idx]
            if images is None:
                inputs = dict(processor(images=[arrays[i] for i in idx], text=text, padding="longest",
                                        return_tensors="pt").to(ctx.device))
            else:
                values, mask, _ = padded([images[i] for i in idx], processor.image_processor)
                inputs = {**_query_tokens(tuple(text), processor, ctx), "pixel_values": values, "pixel_mask": mask}
            inputs["pixel_values"] = inputs["pixel_values"].to(torch_dtype(p.dtype))
            with torch.inference_mode(), precision.compute(ctx, "subject_masks", p.precision):
                out = model(**inputs)
            for i, boxes, scores in zip(idx, *_boxes(out, shape, p.box_threshold)):
                results[i] = (boxes, scores)
    return results


def _query_tokens(text: tuple[str, ...], processor, ctx: StageContext) -> dict:
    """The processor's text half for a batch's queries (padded to the longest), on the device, tokenised once per run
    for each distinct tuple of queries (a suite repeats its subjects)."""
    cache = token_cache(ctx, "subject_masks")
    if text not in cache:
        cache[text] = {k: to_device(v, ctx.device) for k, v in processor(text=list(text), padding="longest",
                                                                          return_tensors="pt").items()}
    return cache[text]


def _boxes(out, shape: tuple[int, int], threshold: float):
    """Per image: boxes (k, 4) x0 y0 x1 y1 in pixels of SHAPE and scores (k,) above THRESHOLD, as the processor's
    `post_process_grounded_object_detection` computes them (without its label words, which nothing here reads)."""
    import torch
    from transformers.image_transforms import center_to_corners_format

    scores = torch.sigmoid(out.logits.float()).max(dim=-1)[0]
    h, w = shape
    boxes = center_to_corners_format(out.pred_boxes.float()) * torch.tensor([w, h, w, h], dtype=torch.float32,
                                                                            device=scores.device)
    keep = scores > threshold
    return ([b[k].cpu().numpy().astype(np.float64) for b, k in zip(boxes, keep)],
            [s[k].cpu().numpy().astype(np.float64) for s, k in zip(scores, keep)])


def _segment(images: list, arrays: list[np.ndarray], boxes: list[np.ndarray], model, processor, p: SubjectMaskParams, ctx: StageContext):
    """[(k, 1, h, w) low-resolution mask logits, resized (h, w) of the image] per image: one image-encoder call per
    batch (images one at a time on the CPU), then every image's boxes as prompts to its encoding (all images in one
    decoder call on CUDA). IMAGES: (3, H, W) uint8 on the device, or None to run the processor on the host ARRAYS.
    On the CPU each image's pixel values are made just before its encoder call: one 12 MB input at a time, which
    the allocator hands back on the next image's; a whole batch's at once (36 MB for three) came as fresh pages
    from the OS, every one faulted in as it was written."""
    import torch

    dtype, step = torch_dtype(p.dtype), p.batch_size if is_cuda(ctx.device) else 1
    ip = processor.image_processor
    if images is None:
        prepared = [processor(images=a, input_boxes=[b.tolist()], return_tensors="pt") for a, b in zip(arrays, boxes)]
        host_values = torch.cat([x["pixel_values"] for x in prepared]).to(ctx.device) if prepared else None
        sizes = [(int(x["reshaped_input_sizes"][0][0]), int(x["reshaped_input_sizes"][0][1])) for x in prepared]
        prompts = [x["input_boxes"][0].to(ctx.device) for x in prepared]
    else:
        sizes = []
    encoded = []
    for i in range(0, len(arrays), step):
        if images is None:
            values = host_values[i:i + step]
        else:
            values, _, resized = padded(images[i:i + step], ip, pad_to=_pad(ip), with_mask=False)
            sizes += resized
        with torch.inference_mode(), precision.compute(ctx, "subject_masks", p.precision):
            encoded.append(batch_invariant(model.get_image_embeddings, ctx.device, pixel_values=values.to(dtype)))
    if images is not None:
        prompts = [torch.as_tensor(_scaled(b, a.shape[:2], hw), device=ctx.device) for a, b, hw in zip(arrays, boxes, sizes)]
    with torch.inference_mode(), precision.compute(ctx, "subject_masks", p.precision):
        embeddings = torch.cat(encoded) if encoded else None
        low_res = _decode(model, embeddings, [b.to(dtype) for b in prompts], ctx.device)
    return [(lo.float(), hw) for lo, hw in zip(low_res, sizes)]


def _pad(image_processor) -> tuple[int, int]:
    return image_processor.pad_size.height, image_processor.pad_size.width


def _scaled(boxes: np.ndarray, shape: tuple[int, int], resized: tuple[int, int]) -> np.ndarray:
    """Box corners in the resized image's pixels, as SamProcessor computes them (from float32 corners)."""
    out = np.asarray(boxes, dtype=np.float32).astype(np.float64).reshape(-1, 2, 2)
    out[..., 0] *= resized[1] / shape[1]
    out[..., 1] *= resized[0] / shape[0]
    return out.reshape(-1, 4)


def _decode(model, embeddings, prompts: list, device: str) -> list:
    """Low-resolution mask logits (k, 1, 256, 256) per image. CUDA: one prompt-decoder call for the batch, each
    image's boxes padded to the most boxes (SAM decodes every box on its own, so padding changes no real box beyond
    float tolerance); CPU: one call per image, so a mask's bits never depend on its batch (see batch_invariant)."""
    import torch

    if not prompts:
        return []
    if not is_cuda(device):
        return [model(image_embeddings=embeddings[i:i + 1], input_boxes=b[None], multimask_output=False).pred_masks[0]
                for i, b in enumerate(prompts)]
    most = max(len(b) for b in prompts)
    boxes = torch.zeros((len(prompts), most, 4), dtype=prompts[0].dtype, device=prompts[0].device)
    for i, b in enumerate(prompts):
        boxes[i, :len(b)] = b
        boxes[i, len(b):] = b[:1]   # a real box as filler: its (discarded) mask costs what any other does
    pred = model(image_embeddings=embeddings, input_boxes=boxes, multimask_output=False).pred_masks
    return [pred[i, :len(b)] for i, b in enumerate(prompts)]


def _panel_mask(logits, box, shape: tuple[int, int], resized: tuple[int, int], pad: tuple[int, int], out=None):
    """The (y1 - y0, x1 - x0) bool mask inside BOX (x0, y0, x1, y1) from (1, 1, h, w) logits, as SAM's processor's
    `post_process_masks` gives it (bilinear to the padded input size, crop the image, bilinear to the original size,
    > 0). Where the image needed no resize and the pad is a whole multiple f of the logits, only the box's low-res
    rows and columns (and one neighbour each side) are upsampled, by f: the same source positions and weights, so the
    same bits (tests/test_subject_masks_batched.py), at a fraction of the cost (a panel of a 2x2 storyboard: a
    quarter). OUT: a bool view to write the mask into (the panel's region of the image's masks), returned."""
    import torch
    import torch.nn.functional as F

    x0, y0, x1, y1 = (int(v) for v in box)
    h, w = logits.shape[-2:]
    f = pad[0] // h
    if tuple(resized) == tuple(shape) and pad == (f * h, f * w):
        a, b = max(y0 // f - 1, 0), min(-(-y1 // f) + 1, h)
        c, d = max(x0 // f - 1, 0), min(-(-x1 // f) + 1, w)
        up = F.interpolate(logits[..., a:b, c:d], size=((b - a) * f, (d - c) * f), mode="bilinear", align_corners=False)
        values = up[0, 0, y0 - a * f:y1 - a * f, x0 - c * f:x1 - c * f]
    else:
        up = F.interpolate(logits, pad, mode="bilinear", align_corners=False)[..., :resized[0], :resized[1]]
        if tuple(resized) != tuple(shape):
            up = F.interpolate(up, shape, mode="bilinear", align_corners=False)
        values = up[0, 0, y0:y1, x0:x1]
    return values > 0 if out is None else torch.gt(values, 0, out=out)


def _compute(batch: list[StageInput], ctx: StageContext) -> list:
    from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor, SamModel, SamProcessor

    p = ctx.params("subject_masks", SubjectMaskParams)
    detector = ctx.model("subject_masks/detector", lambda: load_pretrained(
        DETECTOR, ctx, AutoModelForZeroShotObjectDetection, AutoProcessor, p.dtype))
    segmenter = ctx.model("subject_masks/segmenter", lambda: load_pretrained(SEGMENTER, ctx, SamModel, SamProcessor, p.dtype))
    outputs: list = [None] * len(batch)
    live, queries = [], []
    for i, item in enumerate(batch):
        try:
            queries.append(subject_query(item.controls.get("subject", "")))
            live.append(i)
        except ValueError as exc:
            outputs[i] = exc
    host = on_host(p.preprocess, detector[1].image_processor, segmenter[1].image_processor)
    pixels = {i: pixels_to_device(batch[i].image, ctx.device) for i in live} if not host else {}
    detections = _detect(None if host else [pixels[i] for i in live], [batch[i].image for i in live], queries,
                         *detector, p, ctx)
    picks = {}
    for i, (det_boxes, det_scores) in zip(live, detections):
        panel_boxes = batch[i].deps["panels"].boxes
        best = assign_to_panels(det_boxes, det_scores, panel_boxes, float(p.min_inside))
        clipped = np.full((len(panel_boxes), 4), np.nan)
        for k, d in enumerate(best):
            if d >= 0:
                px0, py0, px1, py1 = panel_boxes[k]
                x0, y0, x1, y1 = det_boxes[d]
                clipped[k] = (max(x0, px0), max(y0, py0), min(x1, px1), min(y1, py1))
        picks[i] = (best, clipped, np.where(best >= 0, det_scores[np.maximum(best, 0)] if len(det_scores) else 0.0, 0.0))
    to_segment = [i for i in live if (picks[i][0] >= 0).any()]
    masks = _segment(None if host else [pixels[i] for i in to_segment], [batch[i].image for i in to_segment],
                     [picks[i][1][picks[i][0] >= 0] for i in to_segment], *segmenter, p, ctx)
    sam_masks = dict(zip(to_segment, masks))
    for i in live:
        best, clipped, scores = picks[i]
        full, sources = _panel_masks(sam_masks.get(i), best, clipped, batch[i].deps["panels"].boxes,
                                     batch[i].image.shape[:2], _pad(segmenter[1].image_processor), ctx.device)
        found = np.array([s != "" for s in sources], bool)
        outputs[i] = SubjectMasks(found, np.where(found[:, None], clipped, np.nan), np.where(found, scores, 0.0),
                                  full, tuple(sources))
    return outputs


def _panel_masks(segmented, best: np.ndarray, clipped: np.ndarray, panel_boxes, shape: tuple[int, int],
                 pad: tuple[int, int], device: str):
    """((N, H, W) bool, source per panel): each found panel's SAM mask inside its panel, assembled on the device and
    fetched once; where SAM's mask is empty there, the clipped box itself ("box"), unless thinner than a pixel.
    SEGMENTED: (low-resolution logits of the found panels, resized size) from `_segment`, or None."""
    import torch

    if is_cuda(device):
        full = torch.zeros((len(panel_boxes), *shape), dtype=torch.bool, device=device)
    else:   # numpy's zeros: calloc, which clears only reused heap pages (0.5 ms for 2x2's four 1024² masks in a run)
        full = torch.from_numpy(np.zeros((len(panel_boxes), *shape), bool))
    nonempty = torch.zeros(len(panel_boxes), dtype=torch.bool, device=device)
    if segmented is not None:
        logits, resized = segmented
        found = iter(range(len(logits)))
        for k, (px0, py0, px1, py1) in enumerate(panel_boxes):
            if best[k] >= 0:
                j = next(found)
                region = _panel_mask(logits[j:j + 1], (px0, py0, px1, py1), shape, resized, pad,
                                     out=full[k, py0:py1, px0:px1])
                # on the CPU numpy's `any` over the region's bytes: a tenth of torch's time (0.01 against 0.11 ms)
                nonempty[k] = region.any() if is_cuda(device) else bool(region.numpy().any())
    from_sam = nonempty.cpu().numpy()
    out = full.cpu().numpy()
    sources = []
    for k in range(len(panel_boxes)):
        if best[k] < 0 or from_sam[k]:
            sources.append("" if best[k] < 0 else "sam")
            continue
        x0, y0, x1, y1 = np.round(clipped[k]).astype(int)
        out[k, y0:y1, x0:x1] = True
        sources.append("box" if out[k].any() else "")   # a box thinner than a pixel shows nothing
    return out, sources


def _model_modules(ctx: StageContext) -> list:
    detector, segmenter = ctx.cache["subject_masks/detector"][0], ctx.cache["subject_masks/segmenter"][0]
    return [detector, segmenter.vision_encoder, segmenter]   # SAM: image encoder, then prompt encoder + mask decoder


STAGE = FeatureStage(name="subject_masks", version="2", compute=_compute, requires=("panels",),
                     models=(DETECTOR, SEGMENTER), params=SubjectMaskParams, model_modules=_model_modules)
