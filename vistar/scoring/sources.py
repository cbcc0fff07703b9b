"""Images given to `vistar.Scorer`: paths, PIL images, numpy arrays and torch tensors, each made into what the engine
scores (the canonical HxWx3 uint8 RGB array of `vistar.engine.images.to_rgb`) with a key from its pixels; the
Scorer's max_pixels holds for both (`decode_source`).

A path stays a path: the engine hashes and decodes the file as `vistar score` does. Everything else is converted
here, once: a PIL image or a uint8 array through the very conversion a decoded file goes through (EXIF orientation,
alpha composited on white, greyscale to RGB), a float image as `torchvision.utils.save_image` writes it,
`floor(clamp(x * 255 + 0.5, 0, 255))` in float32, so a float image saved that way and scored from disk gives the
same pixels. A tensor is converted on its own device and keeps that copy (`DevicePixels.device_pixels`) for the
torch stages of a run on the same device; its pixels are read to the host once, for the key and the CPU stages.

The key of an image given in memory (its `image_sha256`) is the sha256 of the ASCII header `rgb8 H W\\n` followed by
its H·W·3 canonical bytes in row-major RGB order; one whose pixels are unusable (NaN, outside [0, 1], smaller than
8x8) has the sha256 of `raw DTYPE SHAPE\\n` and the bytes as given, and ends in error rows like a bad file.
"""
from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from ..engine.images import ImageError, check_size, to_rgb
from ..engine.prefetch import decode_image

MEMORY_PREFIX = "memory:"   # the `image` column of an image given in memory: this and 16 hex digits of its key
SCORER_BIGGER = "downscale it, or use a Scorer with a larger max_pixels= (and another run_dir)"


class DevicePixels(np.ndarray):
    """The canonical array of an image given as a tensor, carrying the tensor's own uint8 copy (3, H, W) as
    `device_pixels` (a view of an (H, W, 3) tensor, the layout `runtime.device.pixels_to_device` makes). Arrays
    derived from it (slices, arithmetic) carry nothing: they are other pixels."""

    device_pixels: Any = None

    def __array_finalize__(self, obj: object) -> None:
        self.device_pixels = None


@dataclass(eq=False)
class MemoryImage:
    """An image given in memory: its canonical pixels, or the ImageError it gives, and its key. Compared by
    identity, so two equal images stay two samples."""

    pixels: np.ndarray | ImageError
    sha256: str

    @property
    def image(self) -> str:
        return MEMORY_PREFIX + self.sha256[:16]


Source = Path | MemoryImage


def decode_source(source: Source, max_pixels: int) -> np.ndarray | ImageError:
    """What the executor's prefetcher reads for a record: a file's pixels as `vistar score` decodes them, or the
    pixels converted when the image was given. An image given in memory is under the size rule of a file that is
    not a JPEG (it cannot be decoded smaller): larger than MAX_PIXELS, it is an error; the error names the Scorer's
    argument, not the CLI's."""
    if isinstance(source, MemoryImage):
        pixels = source.pixels
        if isinstance(pixels, np.ndarray) and pixels.shape[0] * pixels.shape[1] > max_pixels:
            return ImageError(f"{pixels.shape[1]}x{pixels.shape[0]} image exceeds max_pixels={max_pixels}; {SCORER_BIGGER}")
        return pixels
    result: np.ndarray | ImageError = decode_image(source, max_pixels, SCORER_BIGGER)
    return result


def image_sources(images: object, argument: str = "images") -> list[Source]:
    """One source per image: IMAGES is one image or a list/tuple of them; an NCHW tensor or an NxHxWxC array is N
    images. Raises TypeError (not an image) or ValueError (no image layout) naming `images[i]`."""
    if isinstance(images, (list, tuple)):
        if not images:
            raise ValueError(f"{argument}: no image given")
        return [src for i, item in enumerate(images) for src in _sources(item, f"{argument}[{i}]")]
    return _sources(images, argument)


def _sources(item: object, where: str) -> list[Source]:
    if isinstance(item, (str, os.PathLike)):
        path = Path(item)
        return [path.parent.resolve() / path.name]  # the folder resolved, the file not: as `vistar score` lists it
    if isinstance(item, Image.Image):
        return [_from_pil(item)]
    if isinstance(item, np.ndarray):
        if item.ndim == 4:
            return [_from_array(a, f"{where}[{k}]") for k, a in enumerate(_batch(item, where))]
        return [_from_array(item, where)]
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(item, torch.Tensor):
        if item.ndim == 4:
            return [_from_tensor(t, f"{where}[{k}]") for k, t in enumerate(_batch(item, where))]
        return [_from_tensor(item, where)]
    raise TypeError(f"{where}: expected a path, a PIL image, a numpy array or a torch tensor, not {type(item).__name__}")


def _batch(batch: Any, where: str) -> Any:
    """An NCHW tensor or NxHxWxC array holding images; none is refused as an empty list is (no result to give)."""
    if len(batch) == 0:
        raise ValueError(f"{where}: no image given (a batch of 0 images)")
    return batch


def _from_pil(im: Image.Image) -> MemoryImage:
    try:
        im.load()
        return _canonical(to_rgb(ImageOps.exif_transpose(im)))
    except ImageError as exc:
        return _failed(np.asarray(im), exc)
    except (OSError, SyntaxError, ValueError, EOFError) as exc:   # a lazily opened file that does not decode
        return _failed(np.zeros(0, np.uint8), ImageError(f"corrupt or truncated image: {exc}"))


def _from_array(array: np.ndarray, where: str) -> MemoryImage:
    if array.ndim == 3 and array.shape[-1] == 1:
        array = array[..., 0]
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[-1] not in (3, 4)):
        raise ValueError(f"{where}: a numpy image is HxW, HxWx3 (RGB) or HxWx4 (RGBA), not shape {array.shape}")
    if array.dtype.kind == "f":
        values = array.astype(np.float32)   # an empty image has no range: the size check below refuses it
        if values.size and (unusable := _not_unit_range(float(values.min()), float(values.max()))) is not None:
            return _failed(array, unusable)
        array = np.floor(values * 255.0 + 0.5).clip(0, 255).astype(np.uint8)   # torchvision's save_image rounding
    elif array.dtype != np.uint8:
        raise TypeError(f"{where}: numpy images are uint8 (0-255) or float (0-1), not {array.dtype}")
    try:
        if array.ndim == 3 and array.shape[-1] == 3:   # RGB already: what `to_rgb` would return, without its copy
            return _canonical(check_size(np.ascontiguousarray(array)))
        return _canonical(to_rgb(Image.fromarray(np.ascontiguousarray(array))))
    except ImageError as exc:
        return _failed(array, exc)


def _not_unit_range(lo: float, hi: float) -> ImageError | None:
    """The ImageError of float pixels that are no image: NaN/inf, or outside [0, 1]."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return ImageError("float pixels are not finite (NaN or inf)")
    if lo < 0.0 or hi > 1.0:
        return ImageError(f"float pixels outside [0, 1] (min {lo:.4g}, max {hi:.4g}); scale them to [0, 1] or pass uint8")
    return None


def _from_tensor(tensor: Any, where: str) -> MemoryImage:
    torch = sys.modules["torch"]
    if tensor.ndim != 3 or tensor.shape[0] != 3:
        raise ValueError(f"{where}: a tensor image is CHW (or NCHW) with 3 channels (RGB), not shape {tuple(tensor.shape)}")
    tensor = tensor.detach()
    if tensor.is_floating_point():
        values = tensor.float()   # an empty image has no range: the size check below refuses it
        if values.numel() and (unusable := _not_unit_range(float(values.min()), float(values.max()))) is not None:
            return _failed(tensor.cpu().numpy(), unusable)
        tensor = (values * 255.0 + 0.5).clamp(0, 255).to(torch.uint8)   # on its device; truncation is floor here
    elif tensor.dtype != torch.uint8:
        raise TypeError(f"{where}: tensor images are uint8 (0-255) or float (0-1), not {tensor.dtype}")
    hwc = tensor.permute(1, 2, 0).contiguous()      # the layout the engine's own host-to-device copy has
    host = hwc.cpu().numpy()                         # one read to the host: the key and the CPU stages need it
    try:
        check_size(host)
    except ImageError as exc:
        return _failed(host, exc)
    memory = _canonical(host)
    pixels = host.view(DevicePixels)
    pixels.device_pixels = hwc.permute(2, 0, 1)
    memory.pixels = pixels
    return memory


def _canonical(rgb: np.ndarray) -> MemoryImage:
    digest = hashlib.sha256(f"rgb8 {rgb.shape[0]} {rgb.shape[1]}\n".encode())
    digest.update(np.ascontiguousarray(rgb).data)
    return MemoryImage(rgb, digest.hexdigest())


def _failed(raw: np.ndarray, error: ImageError) -> MemoryImage:
    digest = hashlib.sha256(f"raw {raw.dtype} {raw.shape}\n".encode())
    digest.update(np.ascontiguousarray(raw).tobytes())
    return MemoryImage(error, digest.hexdigest())
