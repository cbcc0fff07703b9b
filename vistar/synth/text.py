"""Rendered text images whose ground truth is the string drawn: the independent expectation for TR tests.

Fonts: Pillow's bundled scalable default font (always present) and, where the system has them, DejaVu
Sans/Serif (a different glyph design, so tests do not pass on one font only).
"""
from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

DEJAVU_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"), Path("/Library/Fonts"))


def available_fonts() -> dict[str, str | None]:
    """Font name → TrueType path (None = Pillow's bundled default font)."""
    fonts: dict[str, str | None] = {"pillow-default": None}
    for name in ("DejaVuSans.ttf", "DejaVuSerif.ttf"):
        path = next((d / name for d in DEJAVU_DIRS if (d / name).is_file()), None)
        if path is not None:
            fonts[name.removesuffix(".ttf")] = str(path)
    return fonts


def load_font(path: str | None, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size) if path is None else ImageFont.truetype(path, size)


def wrap(text: str, font, max_width: float) -> list[str]:
    """Greedy word wrap: a word never splits, a line holds as many words as fit."""
    draw = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    lines, line = [], ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if line and draw.textlength(trial, font=font) > max_width:
            lines.append(line)
            line = word
        else:
            line = trial
    return lines + [line] if line else lines


def render_text(text: str, *, size: int | tuple[int, int] = 512, font_size: int = 44, font: str | None = None,
                background=(245, 245, 240), ink=None, line_gap: float = 1.35, noise: int = 0, blur: float = 0.0,
                seed: int = 0) -> Image.Image:
    """`text` wrapped to 85 % of the width and centred; `noise` ink dots and a Gaussian `blur` degrade it."""
    width, height = (size, size) if isinstance(size, int) else size
    image = Image.new("RGB", (width, height), tuple(background))
    draw = ImageDraw.Draw(image)
    ink = tuple(ink) if ink is not None else ((20, 20, 20) if sum(background) > 380 else (245, 245, 235))
    face = load_font(font, font_size)
    lines = wrap(text, face, width * 0.85)
    step = font_size * line_gap
    y = (height - step * len(lines)) / 2
    for line in lines:
        draw.text(((width - draw.textlength(line, font=face)) / 2, y), line, fill=ink, font=face)
        y += step
    rng = random.Random(seed)
    for _ in range(noise):
        x, yy = rng.randrange(width), rng.randrange(height)
        draw.ellipse((x, yy, x + 6, yy + 6), fill=ink)
    return image.filter(ImageFilter.GaussianBlur(blur)) if blur > 0 else image
