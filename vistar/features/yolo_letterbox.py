"""Ultralytics' letterbox on the device, for the `instances` stage on CUDA.

Ultralytics letterboxes numpy images on the CPU (cv2 resize and border, one image after another) before they
reach the GPU; on 1024² images that, not the forward pass, bounds throughput. `DeviceLetterboxPredictor`
replaces only that step: the raw uint8 pixels go to the device from pinned memory and are resized and padded
there with LetterBox's geometry, so ultralytics' own NMS and its scaling of boxes and masks back to the
original images (computed from the two shapes) stay untouched and correct. Handing `predict` a ready tensor
instead would not do: ultralytics then takes the letterboxed tensor for the original image and returns boxes
and masks in letterbox coordinates.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from ultralytics.models.yolo.segment import SegmentationPredictor

from ..runtime.device import pixels_to_device

PAD_VALUE = 114  # LetterBox's padding_value


def letterbox_geometry(shape: tuple[int, int], new_shape: Sequence[int]) -> tuple[int, int, int, int]:
    """(resized height, width, top, left) as ultralytics' LetterBox computes them (auto=False, centred, scaleup)."""
    h, w = shape
    r = min(new_shape[0] / h, new_shape[1] / w)
    nh, nw = max(round(h * r), 1), max(round(w * r), 1)
    return nh, nw, round((new_shape[0] - nh) / 2 - 0.1), round((new_shape[1] - nw) / 2 - 0.1)


def letterbox_to_tensor(images: Sequence[np.ndarray], new_shape: Sequence[int], device, dtype=torch.float32):
    """(N, 3, *new_shape) in [0, 1] on `device`: each uint8 HxWx3 image resized (bilinear, like cv2.INTER_LINEAR,
    rounded to whole levels as cv2's uint8 output is), centred on a PAD_VALUE canvas, divided by 255."""
    out = torch.full((len(images), 3, *new_shape), float(PAD_VALUE), device=device)
    for i, image in enumerate(images):
        nh, nw, top, left = letterbox_geometry(image.shape[:2], new_shape)
        pixels = pixels_to_device(image, str(device))[None].float()
        if (nh, nw) != image.shape[:2]:
            pixels = F.interpolate(pixels, size=(nh, nw), mode="bilinear", align_corners=False).round_().clamp_(0, 255)
        out[i, :, top:top + nh, left:left + nw] = pixels[0]
    return out.div_(255).to(dtype)


class RgbPredictor(SegmentationPredictor):
    """Ultralytics' own preprocessing (its cv2 LetterBox on the host) fed RGB arrays. Its numpy path takes BGR and
    flips it back to RGB on the tensor; the letterbox treats the three channels alike, so skipping both flips gives
    its tensor bit for bit, without the ~14 ms a 1024² BGR copy costs on one core."""

    def preprocess(self, im):
        boxed = self.pre_transform(im)
        batch = torch.from_numpy(boxed[0])[None] if len(boxed) == 1 else torch.from_numpy(np.stack(boxed))
        batch = batch.to(self.device).permute(0, 3, 1, 2).contiguous()
        return (batch.half() if self.model.fp16 else batch.float()).div_(255)


class DeviceLetterboxPredictor(SegmentationPredictor):
    """SegmentationPredictor whose preprocessing runs on the model's device. Takes RGB arrays (ultralytics' numpy
    path takes BGR and flips them) and always letterboxes to the square imgsz, as `rect=False` does."""

    def preprocess(self, im):
        return letterbox_to_tensor(im, self.imgsz, self.device, torch.float16 if self.model.fp16 else torch.float32)
