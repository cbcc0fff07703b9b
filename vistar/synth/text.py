"""Rendered text images whose ground truth is the string drawn: the independent expectation for TR tests.

Fonts: Pillow's bundled scalable default font (always present) and, where the system has them, DejaVu
Sans/Serif (a different glyph design, so tests do not pass on one font only).
"""
from __future__ import annotations

import importlib.util
import math
import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

DEJAVU_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"), Path("/Library/Fonts"))


def available_fonts() -> dict[str, str | None]:
    """Font name → TrueType path (None = Pillow's bundled default font): the system's DejaVu faces, else the
    matplotlib wheel's (a core dependency), so callers do not depend on fonts the system may lack."""
    fonts: dict[str, str | None] = {"pillow-default": None}
    for name in ("DejaVuSans.ttf", "DejaVuSerif.ttf"):
        path = next((d / name for d in (*DEJAVU_DIRS, matplotlib_data("fonts", "ttf")) if (d / name).is_file()), None)
        if path is not None:
            fonts[name.removesuffix(".ttf")] = str(path)
    return fonts


def matplotlib_data(*parts: str) -> Path:
    """A file in matplotlib's `mpl-data` (its DejaVu fonts, its sample photographs: a core dependency for them),
    found without importing matplotlib, whose import creates a configuration folder in the user's home."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("matplotlib is not installed (a core dependency: pip install -e .)", name="matplotlib")
    return Path(next(iter(spec.submodule_search_locations)), "mpl-data", *parts)


def poster_fonts(ascii_ok: bool = True) -> list[str | None]:
    """Fonts for posters: every DejaVu face inside the matplotlib wheel (regular, bold, oblique, serif, mono: Latin,
    Greek and Cyrillic glyphs) plus, where `ascii_ok`, Pillow's default font (ASCII only: no accents)."""
    faces = sorted(str(p) for p in matplotlib_data("fonts", "ttf").glob("DejaVu*.ttf")
                   if "Display" not in p.name)  # the Display faces are tiny-size specials
    return ([None] if ascii_ok else []) + faces


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
    cx, cy = image.width / 2, image.height / 2   # the rotation's centre: the text's corners are checked where they land
    corners = [(x + dx - cx, y + dy - cy) for dx in (left, right) for dy in (top, bottom)]
    if not _inside(corners, angle, cx, cy, image.size, margin=0.0):
        raise ValueError(f"{text!r} at font size {font_size} placed at ({x:.0f}, {y:.0f}) and rotated {angle:.1f}° "
                         f"leaves the {image.width}×{image.height} image")
    draw.text((x, y), text, font=face, fill=tuple(ink) + (255,), stroke_width=stroke, stroke_fill=(0, 0, 0, 255))
    if angle:
        layer = layer.rotate(angle, resample=Image.BICUBIC, center=(cx, cy))
    image.paste(layer, (0, 0), layer)
    return image


PHOTOS = ("astronaut", "camera", "coffee", "chelsea", "rocket", "brick", "grass", "gravel", "moon", "immunohistochemistry")
TEXTURES = ("noise", "gradient", "stripes", "blobs")
# stripes as thin as letters' strokes (period 8-16 px); a tuning backdrop only, drawn as `background`'s others
FINE_STRIPES = "fine stripes"


def photo_crop(name: str, size: int, rng: random.Random) -> Image.Image:
    """A random `size`² crop of scikit-image's photo `name`, scaled 1-1.6 times past the size."""
    import skimage.data

    photo = Image.fromarray(getattr(skimage.data, name)()).convert("RGB")
    scale = size / min(photo.size) * rng.uniform(1.0, 1.6)
    photo = photo.resize((max(size, round(photo.width * scale)), max(size, round(photo.height * scale))), Image.BICUBIC)
    x, y = rng.randrange(photo.width - size + 1), rng.randrange(photo.height - size + 1)
    return photo.crop((x, y, x + size, y + size))


def background(name: str, size: int, rng: random.Random) -> Image.Image:
    """A `size`² background: a random crop of a scikit-image photo (PHOTOS, none of which holds text) or a
    procedural texture (TEXTURES), so TR is checked on busy, photographic backgrounds and not only on paper."""
    import numpy as np

    if name in PHOTOS:
        return photo_crop(name, size, rng)
    gen = np.random.default_rng(rng.randrange(2**32))
    base, other = gen.integers(0, 256, 3), gen.integers(0, 256, 3)
    ramp = np.linspace(0, 1, size)[None, :, None]
    if name == "noise":
        pixels = base + gen.normal(0, 40, (size, size, 3))
    elif name == "gradient":
        pixels = base + (other - base) * ramp.transpose(1, 0, 2) * np.ones((1, size, 1))
    elif name in ("stripes", FINE_STRIPES):
        period = rng.uniform(12, 60) if name == "stripes" else rng.uniform(8, 16)
        wave = (np.sin(2 * np.pi * (np.arange(size)[:, None] + np.arange(size)[None, :]) / period) > 0)[..., None]
        pixels = np.where(wave, base, other) * np.ones((1, 1, 3))
    elif name == "blobs":
        low = gen.normal(0, 1, (size // 32, size // 32, 3))
        pixels = base + 70 * np.asarray(Image.fromarray(((low - low.min()) / np.ptp(low) * 255).astype("uint8"))
                                        .resize((size, size), Image.BICUBIC), float) / 255 - 35
    else:
        raise ValueError(f"unknown background {name!r} (photos: {PHOTOS}, textures: {TEXTURES + (FINE_STRIPES,)})")
    return Image.fromarray(np.clip(pixels, 0, 255).astype("uint8"))


def render_poster(base: Image.Image, title: list[str], columns: list[list[str]], *, font: str | None = None,
                  font_size: int = 32, ink=(255, 255, 255), stroke: int = 0, angle: float = 0.0, gutter: float = 2.5,
                  decor: int = 0, line_gap: float = 1.4, seed: int = 0) -> Image.Image:
    """Lines of text over `base`: `title` lines centred across the top, then `columns` (one or two lists of lines,
    left-aligned, read column by column) below; the block is rotated by `angle` degrees about its centre.
    `decor` rings, dots and stars (ink colour, about the text's size) go in the free margins: shapes a
    recogniser may read as "O" or "*" that a person does not read as text. The reading order — title, then each
    column top to bottom — is the ground truth. Text that would leave the image raises ValueError."""
    image = base.convert("RGB")
    face = load_font(font, font_size)
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    step, col_widths = font_size * line_gap, [max((measure.textlength(s, font=face) for s in col), default=0.0) for col in columns]
    title_width = max((measure.textlength(s, font=face) for s in title), default=0.0)
    body_width = sum(col_widths) + gutter * font_size * (len(columns) - 1)
    width, height = max(title_width, body_width), step * (len(title) + max((len(c) for c in columns), default=0))
    cx, cy = image.width / 2, image.height / 2
    corners = [(x, y) for x in (-width / 2, width / 2) for y in (-height / 2, height / 2)]
    if not _inside(corners, angle, cx, cy, image.size, margin=font_size * 0.4):
        raise ValueError(f"a {width:.0f}×{height:.0f} px text block rotated {angle:.1f}° leaves the {image.width}×{image.height} image")
    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    fill, outline = tuple(ink) + (255,), tuple(255 - v for v in ink) + (255,)
    top = cy - height / 2
    for k, line in enumerate(title):
        draw.text((cx - measure.textlength(line, font=face) / 2, top + k * step), line, font=face, fill=fill,
                  stroke_width=stroke, stroke_fill=outline)
    x = cx - body_width / 2
    for col, col_width in zip(columns, col_widths):
        for k, line in enumerate(col):
            draw.text((x, top + (len(title) + k) * step), line, font=face, fill=fill, stroke_width=stroke, stroke_fill=outline)
        x += col_width + gutter * font_size
    _decorate(draw, decor, (cx - width / 2, top, cx + width / 2, top + height), image.size, font_size, fill, random.Random(seed))
    layer = layer.rotate(angle, resample=Image.BICUBIC, center=(cx, cy))
    image.paste(layer, (0, 0), layer)
    return image


def _inside(corners, angle: float, cx: float, cy: float, size: tuple[int, int], margin: float) -> bool:
    a = math.radians(angle)  # PIL rotates counter-clockwise on screen: y points down
    for x, y in corners:
        rx, ry = cx + x * math.cos(a) + y * math.sin(a), cy - x * math.sin(a) + y * math.cos(a)
        if not (margin <= rx <= size[0] - margin and margin <= ry <= size[1] - margin):
            return False
    return True


def _decorate(draw: ImageDraw.ImageDraw, count: int, block: tuple[float, ...], size: tuple[int, int], font_size: int,
              fill, rng: random.Random) -> None:
    """`count` rings, dots and stars around (never on) the text block, each about one text height across."""
    placed = 0
    for _ in range(50 * count):
        if placed == count:
            return
        r = font_size * rng.uniform(0.3, 0.6)
        x, y = rng.uniform(r + 4, size[0] - r - 4), rng.uniform(r + 4, size[1] - r - 4)
        if block[0] - 2 * r < x < block[2] + 2 * r and block[1] - 2 * r < y < block[3] + 2 * r:
            continue
        shape = rng.choice(("ring", "dot", "star"))
        if shape == "ring":
            draw.ellipse((x - r, y - r, x + r, y + r), outline=fill, width=max(2, round(font_size / 9)))
        elif shape == "dot":
            draw.ellipse((x - r / 2, y - r / 2, x + r / 2, y + r / 2), fill=fill)
        else:
            turn = rng.uniform(0, 2 * math.pi)
            draw.polygon([(x + r * (1 if k % 2 == 0 else 0.45) * math.cos(turn + k * math.pi / 5),
                           y + r * (1 if k % 2 == 0 else 0.45) * math.sin(turn + k * math.pi / 5)) for k in range(10)], fill=fill)
        placed += 1
