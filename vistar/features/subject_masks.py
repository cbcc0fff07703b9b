"""Where the prompt's recurring subject is in each panel: a box (GroundingDINO) and a mask (SAM).

Cost drives the design: SAM's ViT-H image encoder and GroundingDINO are by far the slowest models of the
suite, so both run once per storyboard image rather than once per panel. GroundingDINO detects the
subject phrase on the whole image; each panel keeps its best detection that lies mostly inside it.
SAM then encodes the whole image once (on a GPU the images of a batch together; on the CPU one at a time, so
a score never depends on the batch size) and its light prompt decoder
turns all panels' boxes into masks from that one encoding. A mask is clipped to its panel; when SAM
returns an empty mask for a detected box the box itself is the mask, and the panel says so.

Both processors resize and normalise on the run's device when they are torch-backed (transformers 5's
default): the raw uint8 pixels go there from pinned memory and the processors' own code runs there, bit for
bit the CPU result on CPU. SAM's masks are upscaled and thresholded on the device too. A PIL-backed processor
gets the arrays on the CPU.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..api import FeatureStage, StageContext, StageInput, SubjectMasks
from ..runtime.device import batch_invariant, is_cuda, pixels_to_device
from .hf_models import DType, load_pretrained, torch_dtype

DETECTOR, SEGMENTER = "grounding-dino-tiny", "sam-vit-huge"


@dataclass(frozen=True)
class SubjectMaskParams:
    """`features.subject_masks`."""

    box_threshold: float = 0.35    # GroundingDINO box score threshold (its published default)
    text_threshold: float = 0.25
    min_inside: float = 0.5        # a detection belongs to a panel when its centre and this much of its area are inside
    dtype: DType = "float32"
    batch_size: int = 8


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


def processor_inputs(images: list[np.ndarray], processor, device: str) -> tuple[list, dict]:
    """(images, keyword arguments) for `processor`: uint8 CHW tensors already on `device`, processed there, when
    its image processor is torch-backed; otherwise the arrays as they are (a PIL backend works on the CPU)."""
    if getattr(processor.image_processor, "backend", None) != "torchvision":
        return images, {}
    return [pixels_to_device(im, device) for im in images], {"device": device, "input_data_format": "channels_first"}


def _detect(images: list[np.ndarray], queries: list[str], model, processor, p: SubjectMaskParams, ctx: StageContext):
    """[(boxes (k, 4), scores (k,))] per image; images of one size go through together."""
    import torch

    results: list = [None] * len(images)
    groups: dict[tuple, list[int]] = {}
    for i, image in enumerate(images):
        groups.setdefault(image.shape[:2], []).append(i)
    step = int(p.batch_size) if is_cuda(ctx.device) else 1  # CPU: one image per call, see batch_invariant
    for shape, members in sorted(groups.items()):
        for start in range(0, len(members), step):
            idx = members[start:start + step]
            pixels, kwargs = processor_inputs([images[i] for i in idx], processor, ctx.device)
            inputs = processor(images=pixels, text=[queries[i] for i in idx], padding="longest", return_tensors="pt",
                               **kwargs).to(ctx.device)
            inputs["pixel_values"] = inputs["pixel_values"].to(torch_dtype(p.dtype))
            with torch.inference_mode():
                out = model(**inputs)
            out.logits, out.pred_boxes = out.logits.float(), out.pred_boxes.float()
            post = processor.post_process_grounded_object_detection(
                out, inputs["input_ids"], threshold=float(p.box_threshold),
                text_threshold=float(p.text_threshold), target_sizes=[shape] * len(idx))
            for i, r in zip(idx, post):
                results[i] = (r["boxes"].cpu().numpy().astype(np.float64), r["scores"].cpu().numpy().astype(np.float64))
    return results


def _segment(images: list[np.ndarray], boxes: list[np.ndarray], model, processor, p: SubjectMaskParams, ctx: StageContext):
    """[(k, H, W) bool masks] per image: one image encoding each (batched), all its boxes as prompts."""
    import torch

    dtype = torch_dtype(p.dtype)
    pixels, kwargs = processor_inputs(images, processor, ctx.device)
    prepared = [processor(images=img, input_boxes=[b.tolist()], return_tensors="pt", **kwargs)
                for img, b in zip(pixels, boxes)]
    embeddings = []
    with torch.inference_mode():
        for start in range(0, len(prepared), int(p.batch_size)):
            pixels = torch.cat([x["pixel_values"] for x in prepared[start:start + int(p.batch_size)]])
            embeddings.append(batch_invariant(model.get_image_embeddings, ctx.device, pixel_values=pixels.to(ctx.device, dtype)))
        embeddings = torch.cat(embeddings) if embeddings else None
        masks = []
        for i, x in enumerate(prepared):
            out = model(image_embeddings=embeddings[i:i + 1], input_boxes=x["input_boxes"].to(ctx.device, dtype),
                        multimask_output=False)
            post = processor.image_processor.post_process_masks(out.pred_masks.float(), x["original_sizes"],
                                                                x["reshaped_input_sizes"])
            masks.append(post[0][:, 0].cpu().numpy().astype(bool))
    return masks


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
    detections = _detect([batch[i].image for i in live], queries, *detector, p, ctx)
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
    masks = _segment([batch[i].image for i in to_segment], [picks[i][1][picks[i][0] >= 0] for i in to_segment], *segmenter, p, ctx)
    sam_masks = dict(zip(to_segment, masks))
    for i in live:
        best, clipped, scores = picks[i]
        h, w = batch[i].image.shape[:2]
        panel_boxes = batch[i].deps["panels"].boxes
        full = np.zeros((len(panel_boxes), h, w), bool)
        sources = []
        found_masks = iter(sam_masks.get(i, []))
        for k, (px0, py0, px1, py1) in enumerate(panel_boxes):
            if best[k] < 0:
                sources.append("")
                continue
            full[k, py0:py1, px0:px1] = next(found_masks)[py0:py1, px0:px1]
            if full[k].any():
                sources.append("sam")
            else:
                x0, y0, x1, y1 = np.round(clipped[k]).astype(int)
                full[k, y0:y1, x0:x1] = True
                sources.append("box" if full[k].any() else "")   # a box thinner than a pixel shows nothing
        found = np.array([s != "" for s in sources], bool)
        outputs[i] = SubjectMasks(found, np.where(found[:, None], clipped, np.nan), np.where(found, scores, 0.0),
                                  full, tuple(sources))
    return outputs


STAGE = FeatureStage(name="subject_masks", version="2", compute=_compute, requires=("panels",),
                     models=(DETECTOR, SEGMENTER), params=SubjectMaskParams)
