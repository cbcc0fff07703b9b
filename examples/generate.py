"""Regenerate the bundled example set: TR prompts and images from three mock "models" of differing text quality.

    python examples/generate.py

model `sharp` renders the requested text exactly, `typo` changes one letter of a word, `drop` omits the
last word and adds noise. Deterministic: a fixed seed and Pillow's bundled font.
"""
from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

HERE = Path(__file__).parent
TEXTS = [
    ("poster-open", "GD", "A bold shop-window poster that says \"GRAND OPENING\"", "GRAND OPENING"),
    ("cafe-sign", "MS", "A chalkboard cafe sign reading \"FRESH COFFEE DAILY\"", "FRESH COFFEE DAILY"),
    ("lab-label", "ED", "A clean laboratory label with the words \"HANDLE WITH CARE\"", "HANDLE WITH CARE"),
    ("sale-banner", "MS", "A bright sale banner showing \"SUMMER SALE 50\"", "SUMMER SALE 50"),
    ("book-cover", "GD", "A minimalist book cover titled \"THE SILENT RIVER\"", "THE SILENT RIVER"),
    ("museum-plaque", "ED", "A museum plaque that reads \"ANCIENT POTTERY\"", "ANCIENT POTTERY"),
]
BACKGROUNDS = [(250, 245, 230), (40, 60, 50), (235, 240, 250), (255, 220, 120), (245, 245, 245), (210, 190, 160)]


def typo(text: str, rng: random.Random) -> str:
    words = text.split()
    i = rng.randrange(len(words))
    word = words[i]
    j = rng.randrange(len(word))
    repl = rng.choice([c for c in "ABCDEFGHIJKLMNOPRSTUVWXYZ" if c != word[j]])
    words[i] = word[:j] + repl + word[j + 1:]
    return " ".join(words)


def render(text: str, bg, size: int = 512, noise: bool = False, seed: int = 0) -> Image.Image:
    im = Image.new("RGB", (size, size), bg)
    draw = ImageDraw.Draw(im)
    ink = (20, 20, 20) if sum(bg) > 380 else (245, 245, 235)
    font = ImageFont.load_default(size=44)
    lines, line = [], ""
    for word in text.split():  # wrap to the canvas width
        trial = (line + " " + word).strip()
        if draw.textlength(trial, font=font) > size * 0.85 and line:
            lines.append(line)
            line = word
        else:
            line = trial
    lines.append(line)
    y = size // 2 - 30 * len(lines)
    for ln in lines:
        w = draw.textlength(ln, font=font)
        draw.text(((size - w) / 2, y), ln, fill=ink, font=font)
        y += 60
    if noise:
        rng = random.Random(seed)
        for _ in range(120):
            x, yy = rng.randrange(size), rng.randrange(size)
            draw.ellipse((x, yy, x + 6, yy + 6), fill=ink)
        im = im.filter(ImageFilter.GaussianBlur(1.2))
    return im


def main() -> None:
    rng = random.Random(7)
    prompts = ["# vistar example set: text rendering (TR) prompts. Regenerate with: python examples/generate.py"]
    for pid, role, core, text in TEXTS:
        prompts.append(f'{pid}: [{role}|TR] {core} {{text="{text}", set="core"}}')
    (HERE / "prompts.vistar").write_text("\n".join(prompts) + "\n")
    for k, (pid, _, _, text) in enumerate(TEXTS):
        bg = BACKGROUNDS[k % len(BACKGROUNDS)]
        variants = {"sharp": (text, False), "typo": (typo(text, rng), False), "drop": (" ".join(text.split()[:-1]), True)}
        for model, (shown, noisy) in variants.items():
            out = HERE / "images" / model / f"{pid}.png"
            out.parent.mkdir(parents=True, exist_ok=True)
            render(shown, bg, noise=noisy, seed=k).save(out, optimize=True)


if __name__ == "__main__":
    main()
