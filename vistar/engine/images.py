"""Find images, map them to prompts, and decode them into one canonical form (RGB uint8).

Every odd input gets a defined behaviour: normalised and scored, or a clear `ImageError`.
"""
from __future__ import annotations

import csv
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif"}
MIN_SIDE = 8                 # smaller images carry no scorable content
DEFAULT_MAX_PIXELS = 64_000_000  # decoded pixels we accept; JPEGs above it are draft-decoded smaller
_SAMPLE_RE = re.compile(r"^(?P<pid>.+?)_(?P<k>\d+)$")

ImageFile.LOAD_TRUNCATED_IMAGES = False


class ImageError(ValueError):
    """An image that cannot be scored; the message says why and what to do."""


@dataclass(frozen=True)
class ImageRecord:
    path: Path          # absolute
    rel: str            # relative to IMAGES, posix separators (the `image` column)
    model: str
    prompt_id: str
    sample: int


@dataclass
class Mapping:
    records: list[ImageRecord]
    unmatched_images: list[str]      # files whose prompt id is unknown
    prompts_without_images: list[str]


def discover(images_dir: str | Path, prompt_ids: set[str], manifest: str | Path | None = None) -> Mapping:
    """`IMAGES/<model>/<prompt_id>[_<k>].<ext>`, or a manifest CSV with `image,prompt_id,model`."""
    root = Path(images_dir).resolve()
    candidates = _from_manifest(root, manifest) if manifest else _from_layout(root)
    records, unmatched = [], []
    for rec in candidates:
        if rec.prompt_id in prompt_ids:
            records.append(rec)
            continue
        m = _SAMPLE_RE.match(rec.prompt_id) if not manifest else None
        if m and m["pid"] in prompt_ids:
            records.append(ImageRecord(rec.path, rec.rel, rec.model, m["pid"], int(m["k"])))
        else:
            unmatched.append(rec.rel)
    records.sort(key=lambda r: (r.model, r.prompt_id, r.sample, r.rel))
    used = {r.prompt_id for r in records}
    return Mapping(records, sorted(unmatched), sorted(prompt_ids - used))


def _from_layout(root: Path):
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: image folder not found")
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for path in sorted(model_dir.rglob("*")):
            if path.is_file() and path.suffix.lower() in IMAGE_EXTS:
                rel = path.relative_to(root).as_posix()
                stem = path.relative_to(model_dir).with_suffix("").as_posix()
                yield ImageRecord(path, rel, model_dir.name, stem, 0)


def _from_manifest(root: Path, manifest):
    with open(manifest, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"image", "prompt_id", "model"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{manifest}: manifest lacks column(s) {', '.join(sorted(missing))}")
        counts: dict[tuple[str, str], int] = {}
        for row in reader:
            path = (root / row["image"]).resolve()
            key = (row["model"], row["prompt_id"])
            sample = int(row["sample"]) if row.get("sample") not in (None, "") else counts.get(key, 0)
            counts[key] = sample + 1
            rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
            yield ImageRecord(path, rel, row["model"], row["prompt_id"], sample)


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_rgb(path: str | Path, max_pixels: int = DEFAULT_MAX_PIXELS) -> np.ndarray:
    """Decode to HxWx3 uint8 RGB: EXIF orientation applied, alpha composited on white,
    16-bit and CMYK converted; oversize JPEGs draft-decoded below `max_pixels`, other oversize formats refused."""
    path = Path(path)
    if path.stat().st_size == 0:
        raise ImageError("empty file (0 bytes)")
    Image.MAX_IMAGE_PIXELS = None  # we enforce our own limit below, before decoding
    try:
        with Image.open(path) as im:
            w, h = im.size
            if w * h > max_pixels:
                if im.format != "JPEG":
                    raise ImageError(f"{w}x{h} {im.format} image exceeds max_pixels={max_pixels}; downscale it or raise --max-pixels")
                scale = (max_pixels / (w * h)) ** 0.5
                im.draft("RGB", (max(1, int(w * scale)), max(1, int(h * scale))))
            im.load()
            return _to_rgb(ImageOps.exif_transpose(im))
    except ImageError:
        raise
    except UnidentifiedImageError:
        raise ImageError("not a recognised image format") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"corrupt or truncated image: {exc}") from None


def _to_rgb(im: Image.Image) -> np.ndarray:
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        arr = np.asarray(im, dtype=np.float64)
        peak = 65535.0 if arr.max() > 255 else 255.0
        im = Image.fromarray(np.clip(arr / peak * 255.0 + 0.5, 0, 255).astype(np.uint8), "L")
    elif im.mode == "F":
        arr = np.asarray(im, dtype=np.float64)
        im = Image.fromarray(np.clip(arr * 255.0 + 0.5, 0, 255).astype(np.uint8), "L")
    if im.mode == "P":
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "LA", "PA"):
        rgba = im.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        im = Image.alpha_composite(canvas, rgba)
    rgb = np.asarray(im.convert("RGB"), dtype=np.uint8)
    if rgb.ndim != 3 or min(rgb.shape[:2]) < MIN_SIDE:
        raise ImageError(f"image is {rgb.shape[1]}x{rgb.shape[0]}; at least {MIN_SIDE}x{MIN_SIDE} pixels are needed")
    return np.ascontiguousarray(rgb)
