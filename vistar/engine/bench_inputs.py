"""Workloads for `vistar bench`: real images laid out like `vistar score` expects, or deterministic synthetic ones,
and the same workload on disk (`write_workload`) so the engine figure is a real `vistar score` run."""
from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..prompts_dsl import Prompt, read_prompts, resolved_controls
from ..prompts_dsl.files import write_vistar
from .images import ImageRecord, discover, load_rgb

SYNTHETIC_MODEL = "synthetic"   # the <model> folder synthetic images are written under


@dataclass
class Item:
    image: np.ndarray
    prompt: Prompt
    record: ImageRecord | None = None   # the `--images` file it was read from; None: synthetic


@dataclass
class Workload:
    """The workload as `vistar score` reads it: image folder, the manifest mapping each item's file to its
    prompt and sample, and prompts file; `paths[i]` is item i's file."""
    images: Path
    prompts: Path
    manifest: Path
    paths: list[Path]


def synthetic_image(prompt: Prompt, size: int, seed: int) -> np.ndarray:
    """A textured scene with a few shapes and, for prompts with text, that text: enough structure that
    detectors and OCR do real work (blank images would flatter every stage)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size] / size
    base = np.stack([200 - 80 * yy, 190 - 40 * xx, 170 + 50 * yy * xx], -1) + rng.normal(0, 6, (size, size, 3))
    im = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(im)
    for _ in range(6):
        x0, y0 = rng.integers(0, size * 3 // 4, 2)
        w, h = rng.integers(size // 10, size // 3, 2)
        colour = tuple(int(c) for c in rng.integers(0, 255, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x0, y0, x0 + w, y0 + h), fill=colour)
    text = resolved_controls(prompt).get("text")
    if text:
        font = ImageFont.load_default(size=max(12, size // 16))
        draw.text((size // 10, size // 2), str(text), fill=(10, 10, 10), font=font)
    return np.asarray(im)


def load_items(prompts_file: str | Path, images: str | Path | None, n: int, size: int) -> list[Item]:
    parsed = read_prompts(prompts_file)
    if not parsed.prompts:
        raise ValueError(f"{prompts_file}: no valid prompts")
    if images:
        by_id = {str(p.id): p for p in parsed.prompts}   # a file's prompts all have ids
        records = discover(images, set(by_id)).records[:n]
        return [Item(load_rgb(r.path), by_id[r.prompt_id], r) for r in records]
    prompts = [parsed.prompts[i % len(parsed.prompts)] for i in range(n)]
    return [Item(synthetic_image(p, size, seed=i), p) for i, p in enumerate(prompts)]


def write_workload(items: list[Item], folder: Path) -> Workload:
    """Real items stay where they are; synthetic ones are written as PNG, lossless, so the run scores the very
    pixels the stage timings used, in `FOLDER/images/synthetic/<prompt_id>_<k>.png`. Either way a manifest
    lists exactly the items with their prompt and sample: file names alone are ambiguous (with prompt ids `p`
    and `p_0`, `p_0.png` is both "p, sample 0" and "p_0"), and discovery prefers the exact id."""
    prompts: dict[str, Prompt] = {}
    for it in items:
        if prompts.setdefault(str(it.prompt.id), it.prompt) != it.prompt:
            raise ValueError(f"two different prompts share the id {it.prompt.id!r}")
    write_vistar(list(prompts.values()), folder / "prompts.vistar")
    manifest = folder / "manifest.csv"
    records = [it.record for it in items if it.record is not None]
    if len(records) == len(items):
        root = records[0].path.parents[len(Path(records[0].rel).parts) - 1]
        _write_manifest(manifest, [(r.rel, r.prompt_id, r.model, r.sample) for r in records])
        return Workload(root, folder / "prompts.vistar", manifest, [r.path for r in records])
    if records:
        raise ValueError("a workload is either all real images or all synthetic")
    (folder / "images" / SYNTHETIC_MODEL).mkdir(parents=True)
    seen: Counter[str] = Counter()
    paths: list[Path] = []
    rows: list[tuple[str, str, str, int]] = []
    for it in items:
        pid = str(it.prompt.id)
        k = seen[pid]
        seen[pid] += 1
        name = f"{pid}_{k}.png"   # unique: the id is everything before the last "_"
        paths.append(folder / "images" / SYNTHETIC_MODEL / name)
        rows.append((f"{SYNTHETIC_MODEL}/{name}", pid, SYNTHETIC_MODEL, k))
        Image.fromarray(it.image).save(paths[-1])
    _write_manifest(manifest, rows)
    return Workload(folder / "images", folder / "prompts.vistar", manifest, paths)


def _write_manifest(path: Path, rows: list[tuple[str, str, str, int]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["image", "prompt_id", "model", "sample"])
        out.writerows(rows)
