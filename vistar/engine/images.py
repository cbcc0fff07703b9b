"""Find images, map them to prompts, and decode them into one canonical form (RGB uint8).

Every odd input gets a defined behaviour: normalised and scored, or a clear `ImageError`.
"""
from __future__ import annotations

import csv
import hashlib
import io
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

import numpy as np
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

from .image_checks import IntegrityError, check_stream

# .heic/.heif have no decoder in Pillow: listed so such files become error rows naming the file, not silently ignored
IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif", ".avif", ".heic", ".heif"}
MIN_SIDE = 8                 # smaller images carry no scorable content
DEFAULT_MAX_PIXELS = 64_000_000  # decoded pixels we accept; JPEGs above it are draft-decoded smaller
MAX_SAMPLE = 2**31 - 1       # the store's `sample` column is int32
# --max-pixels is not part of a row's key (it changes no score of an image within both limits); a run folder keeps
# the value it was started with (the runner refuses another), so a larger one means another --out
BIGGER = "downscale it, or score into a new --out with a larger --max-pixels"   # how a CLI user gets past max_pixels
_SAMPLE_RE = re.compile(r"^(?P<pid>.+?)_(?P<k>\d+)$")


def _pil_open(source: str | Path | BinaryIO) -> Image.Image:
    """Pillow's own `Image.open`: some libraries (ultralytics) replace it globally on import with a wrapper that
    tries to pip-install a HEIF plugin when a file is not an image; decoding here must stay offline and uniform."""
    opener = Image.open
    while getattr(opener, "__module__", "PIL.Image") != "PIL.Image" and "_image_open" in getattr(opener, "__globals__", {}):
        opener = opener.__globals__["_image_open"]
    image: Image.Image = opener(source)
    return image


def _open_without_bomb_limit(source: str | Path | BinaryIO) -> Image.Image:
    """Open (header only) with Pillow's decompression-bomb limit lifted for this call only: `load_rgb` enforces its
    own `max_pixels` before decoding, and must see a 20000x20000 JPEG's size to draft-decode it. The process-wide
    limit stays in force for everyone else."""
    limit, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
    try:
        return _pil_open(source)
    finally:
        Image.MAX_IMAGE_PIXELS = limit


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
    unmatched_images: dict[str, str]       # image (relative path) -> why it matched no prompt
    prompts_without_images: list[str]
    models: list[str]                      # every model folder (empty ones too) or manifest model
    duplicates: dict[str, str] = field(default_factory=dict)  # image not scored -> the files sharing its sample


def discover(images_dir: str | Path, prompt_ids: set[str], manifest: str | Path | None = None,
             run_dir: str | Path | None = None) -> Mapping:
    """`IMAGES/<model>/<prompt_id>[_<k>].<ext>`, or a manifest CSV with `image,prompt_id,model` (optional `sample`).

    An exact id match wins over the `_<k>` reading, so ids that themselves end in `_<digits>` still work.
    `run_dir`, when it is a folder of IMAGES (`vistar score . --out run1`), is not a model folder; nor is any other
    run folder there (one holding `run.json` or `scores.parquet`, e.g. the sibling shards of `--shard`)."""
    root = Path(images_dir).resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: image folder not found")
    unmatched: dict[str, str] = {}
    skip = Path(run_dir).resolve() if run_dir else None
    model_dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and p.resolve() != skip
                        and not _is_run_dir(p))
    candidates = _from_manifest(root, manifest, unmatched) if manifest else _from_layout(root, model_dirs, unmatched)
    records, seen = [], set()
    models = set() if manifest else {printable_path(p.name) for p in model_dirs}
    for rec in candidates:
        models.add(rec.model)
        if rec.prompt_id not in prompt_ids and not manifest:
            m = _SAMPLE_RE.match(rec.prompt_id)
            if m and m["pid"] in prompt_ids:
                rec = ImageRecord(rec.path, rec.rel, rec.model, m["pid"], int(m["k"]))
        if rec.prompt_id not in prompt_ids:
            unmatched[rec.rel] = f"no prompt with id '{rec.prompt_id}'"
        elif rec.sample > MAX_SAMPLE:
            unmatched[rec.rel] = f"sample {rec.sample} is too large (at most {MAX_SAMPLE})"
        elif (rec.rel, rec.model, rec.prompt_id, rec.sample) in seen:
            unmatched[rec.rel] = f"listed twice for model '{rec.model}', prompt '{rec.prompt_id}', sample {rec.sample}"
        else:
            seen.add((rec.rel, rec.model, rec.prompt_id, rec.sample))
            records.append(rec)
    records, duplicates = one_file_per_sample(records)
    used = {r.prompt_id for r in records}
    return Mapping(records, dict(sorted(unmatched.items())), sorted(prompt_ids - used), sorted(models), duplicates)


def one_file_per_sample(records: list[ImageRecord]) -> tuple[list[ImageRecord], dict[str, str]]:
    """Records sorted by (model, prompt, sample, path), one per (model, prompt, sample): when several files map to
    one sample (`p.png`, `p.jpg`, `p_0.png`) the one whose relative path sorts first (code-point order, as
    `LC_ALL=C ls`) is scored and each other file is reported, naming all of them, so a sample is never counted
    twice and which file stands for it does not depend on listing order."""
    groups: dict[tuple[str, str, int], list[ImageRecord]] = {}
    for rec in sorted(records, key=lambda r: (r.model, r.prompt_id, r.sample, r.rel)):
        groups.setdefault((rec.model, rec.prompt_id, rec.sample), []).append(rec)
    kept, duplicates = [], {}
    for (model, prompt_id, sample), group in groups.items():
        kept.append(group[0])
        if len(group) > 1:
            names = ", ".join(r.rel for r in group)
            for rec in group[1:]:
                duplicates[rec.rel] = (f"not scored: {len(group)} files are model '{model}', prompt '{prompt_id}', "
                                       f"sample {sample} ({names}); only the first, {group[0].rel}, is scored. "
                                       "Remove or rename the others")
    return kept, duplicates


def _is_run_dir(path: Path) -> bool:
    return (path / "run.json").is_file() or (path / "scores.parquet").exists()


def printable_path(name: str) -> str:
    """A file name that is not valid UTF-8 (its bytes arrive as surrogate escapes) with those bytes written as
    `\\xNN`: the store, problems.jsonl and terminals only take real text."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _from_layout(root: Path, model_dirs: list[Path], unmatched: dict[str, str]) -> Iterator[ImageRecord]:
    for path in sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTS):
        unmatched[printable_path(path.name)] = "not inside a <model>/ folder"
    for model_dir in model_dirs:
        for path in sorted(model_dir.rglob("*")):
            # a dangling symlink or a folder named like an image is kept: its rows say it cannot be read instead of
            # the image vanishing (a FIFO or device is not: reading one could block the run)
            listed = path.is_file() or path.is_dir() or (path.is_symlink() and not path.exists())
            if listed and path.suffix.lower() in IMAGE_EXTS:
                rel = printable_path(path.relative_to(root).as_posix())
                stem = printable_path(path.relative_to(model_dir).with_suffix("").as_posix())
                yield ImageRecord(path, rel, printable_path(model_dir.name), stem, 0)


def _from_manifest(root: Path, manifest: str | Path, unmatched: dict[str, str]) -> Iterator[ImageRecord]:
    """Rows of the manifest; `image` is relative to IMAGES (or absolute). A bad row is reported, not fatal.
    Column names are matched without case or surrounding spaces (`Image, Prompt_ID` works)."""
    data = Path(manifest).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{manifest}:{line}: byte 0x{data[exc.start]:02X} is not UTF-8 text; save the manifest as UTF-8") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    reader.fieldnames = [(f or "").strip().lower() for f in reader.fieldnames or []]
    missing = {"image", "prompt_id", "model"} - set(reader.fieldnames)
    if missing:
        raise ValueError(f"{manifest}: manifest lacks column(s) {', '.join(sorted(missing))} "
                         f"(found: {', '.join(reader.fieldnames) or 'no header'})")
    counts: dict[tuple[str, str], int] = {}
    for row in reader:
        lineno = reader.line_num  # the file's line, also after blank lines or quoted line breaks
        image, pid, model = ((row.get(c) or "").strip() for c in ("image", "prompt_id", "model"))
        if not image or not pid or not model:
            unmatched[f"{manifest}:{lineno}"] = "manifest row needs image, prompt_id and model"
            continue
        path = (root / image).resolve()
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        raw_sample = (row.get("sample") or "").strip()
        if raw_sample and (not raw_sample.isdecimal() or int(raw_sample) > MAX_SAMPLE):
            unmatched[rel] = f"{manifest}:{lineno}: sample must be an integer from 0 to {MAX_SAMPLE}, not '{raw_sample}'"
            continue
        key = (model, pid)
        sample = int(raw_sample) if raw_sample else counts.get(key, 0)
        counts[key] = max(counts.get(key, 0), sample + 1)
        yield ImageRecord(path, rel, model, pid, sample)


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_rgb(path: str | Path, max_pixels: int = DEFAULT_MAX_PIXELS, bigger: str = BIGGER) -> np.ndarray:
    """Decode to HxWx3 uint8 RGB: EXIF orientation applied, alpha composited on white, 16-bit and CMYK
    converted. The size is read from the header before any pixel is decoded: an oversize JPEG is
    draft-decoded (DCT scaling by 1/2, 1/4 or 1/8) to at most `max_pixels`; other oversize formats are refused.
    Strict: the file is read once, whole, and a file failing its format's own checks (`image_checks`) or cut
    short is refused rather than decoded to pixels nobody generated. `bigger`: how the caller's user gets past
    max_pixels, said in that error (the CLI's options by default)."""
    return decode_bytes(read_image_bytes(path), max_pixels, suffix=Path(path).suffix, bigger=bigger)


def read_image_bytes(path: str | Path) -> bytes:
    """The whole file, or ImageError when it cannot be read, is empty, or yields fewer bytes than its size (a
    file being rewritten, a failing disk)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data = fh.read()
    except OSError as exc:  # vanished, a dangling link, a folder, permissions
        raise ImageError(f"cannot read file: {exc}") from None
    if size == 0 and not data:
        raise ImageError("empty file (0 bytes)")
    if len(data) != size:
        raise ImageError(f"cannot read file: short read, {len(data)} bytes read of a {size}-byte file (the file "
                         "changed while being read, or the disk failed)")
    return data


def decode_bytes(data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS, suffix: str = "", bigger: str = BIGGER) -> np.ndarray:
    """`load_rgb` on a file's bytes already read (`read_image_bytes`); `suffix` only words the error for a format
    this Pillow cannot decode."""
    try:
        with _open_without_bomb_limit(io.BytesIO(data)) as im:
            w, h = im.size
            if w * h > max_pixels:
                if im.format != "JPEG":
                    raise ImageError(f"{w}x{h} {im.format} image exceeds max_pixels={max_pixels}; {bigger}")
                factor = next((f for f in (2, 4, 8) if math.ceil(w / f) * math.ceil(h / f) <= max_pixels), None)
                if factor is None:
                    raise ImageError(f"{w}x{h} JPEG exceeds max_pixels={max_pixels} even decoded at 1/8 scale; {bigger}")
                im.draft(im.mode if im.mode in ("RGB", "L", "CMYK") else "RGB", (max(1, w // factor), max(1, h // factor)))
                if im.size[0] * im.size[1] > max_pixels:  # draft could not scale down enough (an extreme aspect ratio)
                    raise ImageError(f"{w}x{h} JPEG exceeds max_pixels={max_pixels}; {bigger}")
            check_stream(data)
            ImageFile.LOAD_TRUNCATED_IMAGES = False  # whatever another imported library set: never pad with grey
            im.load()
            ImageOps.exif_transpose(im, in_place=True)  # in place: no second full-size copy
            return to_rgb(im)
    except ImageError:
        raise
    except UnidentifiedImageError:
        try:
            check_stream(data)  # a PNG whose header chunks fail their CRC: say which, not "not an image"
        except IntegrityError as exc:
            raise ImageError(f"corrupt or truncated image: {exc}") from None
        if suffix.lower() in (".heic", ".heif", ".avif"):  # formats Pillow decodes only with a plugin or a newer build
            raise ImageError(f"not a recognised image format: this Pillow cannot decode {suffix} files; "
                             "convert them to PNG") from None
        raise ImageError("not a recognised image format") from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:  # IntegrityError is a ValueError
        raise ImageError(f"corrupt or truncated image: {exc}") from None


def to_rgb(im: Image.Image) -> np.ndarray:
    """A loaded image in the canonical form (the one conversion for files and for images given in memory)."""
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):  # 16-bit greyscale (PNG/TIFF): full range is 0..65535
        arr = np.asarray(im, dtype=np.float64)
        im = Image.fromarray(np.clip(arr / 65535.0 * 255.0 + 0.5, 0, 255).astype(np.uint8), "L")
    elif im.mode == "F":
        arr = np.asarray(im, dtype=np.float64)
        im = Image.fromarray(np.clip(arr * 255.0 + 0.5, 0, 255).astype(np.uint8), "L")
    if im.mode == "P":
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "LA", "PA"):
        rgba = im.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        im = Image.alpha_composite(canvas, rgba)
    rgb = np.asarray(im if im.mode == "RGB" else im.convert("RGB"), dtype=np.uint8)
    return np.ascontiguousarray(check_size(rgb))


def check_size(rgb: np.ndarray) -> np.ndarray:
    """RGB, or the ImageError of an image too small to score (files and images given in memory alike)."""
    if rgb.ndim != 3 or min(rgb.shape[:2]) < MIN_SIDE:
        raise ImageError(f"image is {rgb.shape[1]}x{rgb.shape[0]}; at least {MIN_SIDE}x{MIN_SIDE} pixels are needed")
    return rgb
