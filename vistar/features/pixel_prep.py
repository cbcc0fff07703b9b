"""The checkpoints' image processors as tensor operations on the run's device (CLIP, DINOv2, SAM, GroundingDINO).

transformers 5's image processors are torchvision-backed: they resize a uint8 tensor (antialiased), centre-crop,
rescale and normalise in float32, and pad. Called per crop on host arrays they convert, copy and check every crop on
the CPU, and on a GPU box the float32 result crosses the bus. Here the same steps, with the processor object's own
settings and its own `resize`, `center_crop` and `rescale_and_normalize`, run on the raw uint8 image, which goes to
the device once (`pixels_to_device`): panel and subject crops are views of it, same-shaped views are resized in one
call (each image of it on its own: a crop's tensor never depends on its batch neighbours), and the float batch is
written once, contiguous as the processor returns it (on the CPU through a per-channel table, runtime/normalise.py;
SAM's and GroundingDINO's there in channels-last memory, `padded`).
On the CPU the tensors equal the processor's bit for bit (tests/test_pixel_prep.py); on CUDA its resize kernels
differ from the CPU's by one grey level at most (docs/performance.md#pipeline).
"""
from __future__ import annotations

from typing import Literal, Sequence

import numpy as np

from ..runtime.device import to_device
from ..runtime.normalise import land_in, normalise_into

Preprocess = Literal["device", "host"]   # a stage's `preprocess` parameter


def on_host(preprocess: Preprocess, *image_processors) -> bool:
    """Whether a stage runs its checkpoint's processors themselves on host arrays, as these stages did before:
    `features.<stage>.preprocess: host` (the naive baseline of benchmarks/bench_end_to_end.py), or an image
    processor that is not torch-backed (a PIL one works on arrays). `device` (the default): the tensor path below."""
    return preprocess == "host" or any(getattr(ip, "backend", None) != "torchvision" for ip in image_processors)


def _resized(crops: Sequence, processor) -> list:
    """(1, 3, H, W) uint8 per (3, h, w) crop, resized as PROCESSOR resizes, from channels-last memory (the layout
    torch's uint8 antialiased kernels run fastest on; same values). A dense crop is resized as it lies; views (panel
    crops) are copied into one channels-last stack per shape and resized in one call: each image of it on its own,
    the same bits as one at a time, at two thirds of the four calls' time for a 2x2 storyboard's panels."""
    import torch

    out: list = [None] * len(crops)
    views: dict[tuple, list[int]] = {}
    for i, crop in enumerate(crops):
        if crop[None].is_contiguous(memory_format=torch.channels_last):
            out[i] = processor.resize(crop[None], size=processor.size, resample=processor.resample)
        else:
            views.setdefault(tuple(crop.shape), []).append(i)
    for shape, members in views.items():
        stack = torch.empty((len(members), *shape), dtype=crops[members[0]].dtype, device=crops[members[0]].device,
                            memory_format=torch.channels_last)
        for j, i in enumerate(members):
            stack[j].copy_(crops[i])
        resized = processor.resize(stack, size=processor.size, resample=processor.resample)
        for j, i in enumerate(members):
            out[i] = resized[j:j + 1]
    return out


def _normalise_into(out, pixels, processor) -> None:
    """OUT (3, h, w) float32 := PROCESSOR's fused rescale and normalisation of the uint8 PIXELS: the same float32
    operations as its `rescale_and_normalize` (x - 255·mean, then / 255·std), through a per-channel table on the
    CPU (runtime/normalise.py)."""
    import torch

    def arithmetic(values):
        if processor.do_normalize:
            fold = 1.0 / processor.rescale_factor if processor.do_rescale else 1.0
            mean = torch.tensor(tuple(processor.image_mean), device=values.device) * fold
            std = torch.tensor(tuple(processor.image_std), device=values.device) * fold
            values.sub_(mean.view(-1, 1, 1)).div_(std.view(-1, 1, 1))
        elif processor.do_rescale:
            values.mul_(processor.rescale_factor)

    normalise_into(out, pixels, arithmetic)


def _stacked(images: list, height: int, width: int, processor, with_mask: bool = False, channels_last: bool = False):
    """(N, 3, HEIGHT, WIDTH) float32, contiguous as the processor returns it or, CHANNELS_LAST, in channels-last memory
    (the same values): each (1, 3, h, w) uint8 image normalised into its top-left corner, zero elsewhere (the
    processors pad with 0 after normalising); and, WITH_MASK, the (N, HEIGHT, WIDTH) int64 mask of the real pixels, as
    GroundingDINO's processor gives it (else None). Where no image is padded (one image per call, as on the CPU) the
    mask is all ones: a broadcast 1, no bytes written, which the model reads as it reads the processor's (it only
    converts and downsamples the mask)."""
    import torch

    device = images[0].device
    layout = torch.channels_last if channels_last else torch.contiguous_format
    out = torch.empty((len(images), 3, height, width), dtype=torch.float32, device=device, memory_format=layout)
    mask = None
    if with_mask and all(tuple(image.shape[-2:]) == (height, width) for image in images):
        mask = torch.ones((), dtype=torch.int64, device=device).expand(len(images), height, width)
    elif with_mask:
        mask = torch.empty((len(images), height, width), dtype=torch.int64, device=device)
    for i, image in enumerate(images):
        h, w = image.shape[-2:]
        _normalise_into(out[i, :, :h, :w], image[0], processor)
        out[i, :, h:].zero_()
        out[i, :, :h, w:].zero_()
        if mask is not None and mask.stride(0):
            mask[i, :h, :w] = 1
            mask[i, h:] = 0
            mask[i, :h, w:] = 0
    return out, mask


def centre_crops(crops: Sequence, processor):
    """(N, 3, crop_h, crop_w) pixel values of (3, h, w) uint8 crops: shortest edge resized, centre crop, normalised
    (CLIP's and DINOv2's processors)."""
    size = processor.crop_size
    return _stacked([processor.center_crop(r, size) for r in _resized(crops, processor)], size.height, size.width,
                    processor)[0]


def padded(images: Sequence, processor, pad_to: tuple[int, int] | None = None, with_mask: bool = True):
    """(pixel values (N, 3, H, W), pixel mask (N, H, W) or None, resized (h, w) of each image) for (3, h, w) uint8
    images: each resized as PROCESSOR resizes, normalised, padded bottom-right with zeros to PAD_TO (SAM's fixed
    square, which needs no mask) or to the batch's largest size (GroundingDINO). On the CPU the values lie
    channels-last, as the decoded image and the uint8 resize's output do: one table pass writes them from the
    interleaved bytes (runtime/normalise.py), and the models' first convolution runs faster on that layout than on
    the planar one (which it converts itself), to the same bits (tests/test_pixel_prep.py)."""
    resized = _resized(images, processor)
    sizes = [(int(r.shape[-2]), int(r.shape[-1])) for r in resized]
    height, width = pad_to or (max(h for h, _ in sizes), max(w for _, w in sizes))
    values, mask = _stacked(resized, height, width, processor, with_mask, channels_last=resized[0].device.type == "cpu")
    return values, mask, sizes


def masked_square(pixels, mask: np.ndarray, fill: np.ndarray):
    """(3, side, side) uint8 on PIXELS' device: the (3, H, W) image inside MASK's bounding box, FILL (RGB) outside
    the mask and around it, centred in a square (features.dino_embed.masked_crop, computed on the device)."""
    import torch

    rows, cols = np.flatnonzero(mask.any(1)), np.flatnonzero(mask.any(0))
    if len(rows) == 0:
        raise ValueError("empty mask")
    y0, y1, x0, x1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    h, w = y1 - y0, x1 - x0
    side = max(h, w)
    top, left = (side - h) // 2, (side - w) // 2
    if pixels.device.type == "cpu":
        return _masked_square_cpu(pixels, mask[y0:y1, x0:x1], (y0, x0), side, (top, left), fill)
    inside = to_device(torch.from_numpy(np.ascontiguousarray(mask[y0:y1, x0:x1])), str(pixels.device))[..., None]
    colour = torch.as_tensor(fill, dtype=torch.uint8, device=pixels.device).view(1, 1, 3)
    square = torch.empty((side, side, 3), dtype=torch.uint8, device=pixels.device)   # the image's own memory order
    for strip in (square[:top], square[top + h:], square[top:top + h, :left], square[top:top + h, left + w:]):
        strip.copy_(colour.expand_as(strip))
    torch.where(inside, pixels.permute(1, 2, 0)[y0:y1, x0:x1], colour, out=square[top:top + h, left:left + w])
    return square.permute(2, 0, 1)


def _masked_square_cpu(pixels, inside: np.ndarray, origin: tuple[int, int], side: int, offset: tuple[int, int],
                       fill: np.ndarray):
    """`masked_square` on the CPU: the square filled, then OpenCV's masked copy of the box's pixels where INSIDE
    (the same bytes as torch.where's, at under half its time on a 512² subject)."""
    import cv2
    import torch

    (y0, x0), (top, left), (h, w) = origin, offset, inside.shape
    square = torch.empty((side, side, 3), dtype=torch.uint8)
    canvas = square.numpy()
    canvas[...] = fill
    region = canvas[top:top + h, left:left + w]
    source = pixels.permute(1, 2, 0).numpy()[y0:y0 + h, x0:x0 + w]
    if source.strides[1:] != (3, 1):   # OpenCV reads interleaved channels with only the rows strided
        source = np.ascontiguousarray(source)
    land_in(region, cv2.copyTo(source, (inside if inside.dtype == bool else inside != 0).view(np.uint8), region))
    return square.permute(2, 0, 1)
