"""How the judge sees an image: its pixel identity for the cache and the PNG that is sent, or, for a benchmark
script that sends the image file itself, that file's bytes."""
from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
from PIL import Image


def image_sha256(image: np.ndarray) -> str:
    """Identity of the decoded pixels (the cache must not depend on how the file was encoded)."""
    digest = hashlib.sha256(str(image.shape).encode())
    digest.update(np.ascontiguousarray(image).tobytes())
    return digest.hexdigest()


def png_bytes(image: np.ndarray, max_side: int = 0) -> bytes:
    """PNG of the image, downscaled (Lanczos, aspect kept) so its longer side is at most `max_side` when > 0:
    judges bill and cap image size, and a full-resolution PNG can exceed request limits."""
    im = Image.fromarray(image)
    if max_side and max(im.size) > max_side:
        scale = max_side / max(im.size)
        im = im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def file_as_is(image: np.ndarray, source: Path | None) -> bytes:
    """The image file's bytes, unchanged (what WISE's, PhyBench's and UniEval's scripts send); a lossless PNG of
    the pixels at full size for an image that came from memory and has no file."""
    return source.read_bytes() if source is not None else png_bytes(image, 0)


def mime_of(data: bytes) -> str:
    """The MIME type of encoded image bytes, read from their header (`image/png`, `image/jpeg`, ...)."""
    try:
        with Image.open(io.BytesIO(data)) as im:
            return im.get_format_mimetype() or "application/octet-stream"
    except (OSError, ValueError):
        return "application/octet-stream"
