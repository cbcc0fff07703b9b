"""How the judge sees an image: its pixel identity for the cache and the PNG that is sent."""
from __future__ import annotations

import hashlib
import io

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
