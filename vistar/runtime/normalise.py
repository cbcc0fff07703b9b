"""uint8 pixels into normalised float32, the processors' arithmetic bit for bit, in fewer passes on the CPU.

The processors convert the uint8 image to float32, then subtract and divide over every value: three passes over
4 bytes a value, the largest host cost of SAM's and GroundingDINO's inputs. A uint8 channel holds only 256 values,
so those same float32 operations applied once to 0..255 make a table per channel, and OpenCV's LUT writes each
channel's float plane from its uint8 plane: every value equals the arithmetic's (the table IS its result), in
about 60 % of the time on a warm 1024² image (GroundingDINO's 800² and SAM's 1024² inputs). A channels-last
destination (those two inputs on the CPU) is written by one LUT over every channel straight from the interleaved
bytes: no pass splitting them into planes, which cost as much as the table pass once the memory is cold (as it is
after a model's forward call). CUDA tensors and small images run the arithmetic itself.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:
    from torch import Tensor


TABLE_FROM = 1 << 19   # values: below about 3 x 400², making the table costs what it saves (CLIP's 224² crops, depth's 384²)


def normalise_into(out: Tensor, pixels: Tensor, arithmetic: Callable[[Tensor], object]) -> None:
    """OUT (C, h, w) float32 := ARITHMETIC applied in place to PIXELS (C, h, w) uint8 as float32. ARITHMETIC must be
    elementwise within a channel (per-channel constants broadcast over (C, 1, 1)), as the processors' is."""
    import cv2  # with torch in the `cv` extra
    import torch

    if (out.device.type != "cpu" or out.dtype != torch.float32 or pixels.dtype != torch.uint8
            or pixels.numel() < TABLE_FROM):
        out.copy_(pixels)
        arithmetic(out)
        return
    table = torch.arange(256, dtype=torch.float32).repeat(len(pixels), 1, 1)   # (C, 1, 256): every uint8 value
    arithmetic(table)
    planes = np.asarray(out.numpy())
    source = np.asarray(pixels.numpy())
    hwc = source.transpose(1, 2, 0)
    interleaved = hwc.strides[1:] == (hwc.shape[2], 1)   # channels last, only the rows strided (a panel's view)
    target = planes.transpose(1, 2, 0)
    if target.strides[1:] == (4 * target.shape[2], 4):   # a channels-last destination: one LUT over every channel
        if not interleaved:
            hwc = np.ascontiguousarray(hwc)
        land_in(target, cv2.LUT(hwc, table.permute(1, 2, 0).contiguous().numpy(), dst=target))
        return
    split = _deinterleaved(hwc) if interleaved else None
    for c in range(len(source)):
        plane: np.ndarray
        if split is not None:
            plane = split[c]
        else:   # planar: each channel read as it lies (a copy where even its rows are strided)
            plane = source[c] if source.strides[2] == 1 else np.ascontiguousarray(source[c])
        land_in(planes[c], cv2.LUT(plane, table[c].numpy(), dst=planes[c]))


def _deinterleaved(hwc: np.ndarray) -> np.ndarray:
    """(C, h, w) uint8 planes of the channels-last HWC: one pass of OpenCV's split over the interleaved bytes, into
    planes allocated here (a third of the time of extracting each channel in its own pass, which reads every byte C
    times: 0.3 against 0.8 ms for a 1024² image)."""
    import cv2

    planes = np.empty((hwc.shape[2], *hwc.shape[:2]), np.uint8)
    for plane, written in zip(planes, cv2.split(hwc, list(planes))):
        land_in(plane, written)
    return planes


def land_in(target: np.ndarray, written: np.ndarray) -> None:
    """Make an OpenCV call's result WRITTEN land in TARGET, the `dst` it was given: OpenCV writes there in place
    when it can, and allocates a new array instead when it cannot (a layout it does not write), so copy it then."""
    if not np.shares_memory(written, target):
        target[...] = written
