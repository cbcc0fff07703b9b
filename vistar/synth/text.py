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
    """`text` wrapped to 85 % of the width and centred; `noise` ink dots and a Gaussian `blur` degrade it.

    The ground truth is the string drawn, so text that would not fit (a word wider than the canvas, more lines
    than its height holds) raises ValueError instead of being clipped silently: choose a smaller `font_size`."""
    width, height = (size, size) if isinstance(size, int) else size
    image = Image.new("RGB", (width, height), tuple(background))
    draw = ImageDraw.Draw(image)
    ink = tuple(ink) if ink is not None else ((20, 20, 20) if sum(background) > 380 else (245, 245, 235))
    face = load_font(font, font_size)
    lines = wrap(text, face, width * 0.85)
    step = font_size * line_gap
    widest = max((draw.textlength(line, font=face) for line in lines), default=0.0)
    if widest > width or step * len(lines) > height:
        raise ValueError(f"{text!r} at font size {font_size} does not fit a {width}×{height} canvas "
                         f"(widest line {widest:.0f} px, {len(lines)} lines of {step:.0f} px)")
    y = (height - step * len(lines)) / 2
    for line in lines:
        draw.text(((width - draw.textlength(line, font=face)) / 2, y), line, fill=ink, font=face)
        y += step
    rng = random.Random(seed)
    for _ in range(noise):
        x, yy = rng.randrange(width), rng.randrange(height)
        draw.ellipse((x, yy, x + 6, yy + 6), fill=ink)
    return image.filter(ImageFilter.GaussianBlur(blur)) if blur > 0 else image


def overlay_text(background: Image.Image, text: str, *, font: str | None = None, font_size: int = 36, ink=(255, 255, 255),
                 stroke: int = 0, xy: tuple[float, float] | None = None, angle: float = 0.0) -> Image.Image:
    """`text` on one line over a photo or texture (TR on busy backgrounds), centred unless `xy` (top-left) is given,
    optionally outlined in black (`stroke` px) and rotated by `angle` degrees about the image centre. Text that
    would leave the image raises ValueError, as in `render_text`."""
    image = background.convert("RGB")
    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    face = load_font(font, font_size)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=face, stroke_width=stroke)
    x, y = xy if xy is not None else ((image.width - right) / 2, (image.height - bottom) / 2)
    if x + left < 0 or y + top < 0 or x + right > image.width or y + bottom > image.height:
        raise ValueError(f"{text!r} at font size {font_size} placed at ({x:.0f}, {y:.0f}) leaves the {image.width}×{image.height} image")
    draw.text((x, y), text, font=face, fill=tuple(ink) + (255,), stroke_width=stroke, stroke_fill=(0, 0, 0, 255))
    if angle:
        layer = layer.rotate(angle, resample=Image.BICUBIC, center=(image.width / 2, image.height / 2))
    image.paste(layer, (0, 0), layer)
    return image
