"""Regenerate the bundled example set: TR prompts and images from three mock "models" of differing text quality.

    python examples/generate.py [--out DIR]      # default: next to this script

Model `sharp` renders the requested text exactly, `typo` changes one letter of one word, `drop` leaves
out the last word and is noisy and blurred. Deterministic: fixed seeds and Pillow's bundled font, so the
expected ranking is sharp > typo > drop (checked by tests/test_examples_ranking.py).
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # runnable from a source checkout without installing

from vistar.synth.text import render_text  # noqa: E402

SIZE = 512
TEXTS = [  # prompt id, role, core (the T2I prompt), text the image must show
    ("poster-open", "GD", 'A bold shop-window poster that says "GRAND OPENING"', "GRAND OPENING"),
    ("cafe-sign", "MS", 'A chalkboard cafe sign reading "FRESH COFFEE DAILY"', "FRESH COFFEE DAILY"),
    ("lab-label", "ED", 'A clean laboratory label with the words "HANDLE WITH CARE"', "HANDLE WITH CARE"),
    ("sale-banner", "MS", 'A bright sale banner showing "SUMMER SALE 50"', "SUMMER SALE 50"),
    ("book-cover", "GD", 'A minimalist book cover titled "THE SILENT RIVER"', "THE SILENT RIVER"),
    ("museum-plaque", "ED", 'A museum plaque that reads "ANCIENT POTTERY"', "ANCIENT POTTERY"),
]
BACKGROUNDS = [(250, 245, 230), (40, 60, 50), (235, 240, 250), (255, 220, 120), (245, 245, 245), (210, 190, 160)]


def typo(text: str, rng: random.Random) -> str:
    """One letter of one word replaced by a different capital letter."""
    words = text.split()
    i = rng.choice([k for k, w in enumerate(words) if w.isalpha()])
    j = rng.randrange(len(words[i]))
    words[i] = words[i][:j] + rng.choice([c for c in "ABCDEFGHIJKLMNOPRSTUVWXYZ" if c != words[i][j]]) + words[i][j + 1:]
    return " ".join(words)


def generate(out: Path) -> None:
    rng = random.Random(7)
    prompts = ["# vistar example set: text rendering (TR) prompts. Regenerate with: python examples/generate.py"]
    prompts += [f'{pid}: [{role}|TR] {core} {{text="{text}", set="core"}}' for pid, role, core, text in TEXTS]
    out.mkdir(parents=True, exist_ok=True)
    (out / "prompts.vistar").write_text("\n".join(prompts) + "\n")
    for k, (pid, _, _, text) in enumerate(TEXTS):
        style = {"size": SIZE, "font_size": 44, "background": BACKGROUNDS[k]}
        variants = {"sharp": render_text(text, **style),
                    "typo": render_text(typo(text, rng), **style),
                    "drop": render_text(" ".join(text.split()[:-1]), **style, noise=120, blur=1.2, seed=k)}
        for model, image in variants.items():
            path = out / "images" / model / f"{pid}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            image.save(path, optimize=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE, help="folder for prompts.vistar and images/")
    generate(ap.parse_args().out)
