"""Workloads for `vistar bench`: real images laid out like `vistar score` expects, or deterministic synthetic ones."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..prompts_dsl import Prompt, read_prompts, resolved_controls
from .bench import Item
from .images import discover, load_rgb


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
        by_id = {p.id: p for p in parsed.prompts}
        records = discover(images, set(by_id)).records[:n]
        return [Item(load_rgb(r.path), by_id[r.prompt_id]) for r in records]
    prompts = [parsed.prompts[i % len(parsed.prompts)] for i in range(n)]
    return [Item(synthetic_image(p, size, seed=i), p) for i, p in enumerate(prompts)]
