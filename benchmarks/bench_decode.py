"""What strict decoding costs: `load_rgb` (read once, the format's integrity checks, decode) against Pillow's
decode alone (what `load_rgb` did before the checks), and the checks alone, in one process.

    python benchmarks/bench_decode.py [--repeat 20]

Inputs: the example images (512² PNGs) and two photos at 1024² (scikit-image's astronaut, matplotlib's
grace_hopper) as PNG, where inflating is a larger share of decoding, and as JPEG. Best of `--repeat` passes,
milliseconds per image.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from vistar.engine.image_checks import check_stream
from vistar.engine.images import _to_rgb, load_rgb

REPO = Path(__file__).resolve().parents[1]


def pillow_only(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        im.load()
        ImageOps.exif_transpose(im, in_place=True)
        return _to_rgb(im)


def checks_only(path: Path) -> None:
    check_stream(path.read_bytes())


def best_ms(call, paths: list[Path], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for path in paths:
            call(path)
        best = min(best, (time.perf_counter() - start) / len(paths))
    return 1000 * best


def photos(folder: Path, suffix: str) -> list[Path]:
    import skimage.data

    from vistar.synth.text import matplotlib_data

    out = []
    for name, image in (("astronaut", Image.fromarray(skimage.data.astronaut())),
                        ("grace_hopper", Image.open(matplotlib_data("sample_data", "grace_hopper.jpg")))):
        path = folder / f"{name}{suffix}"
        image.convert("RGB").resize((1024, 1024), Image.Resampling.LANCZOS).save(path, quality=90)
        out.append(path)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sets = {"examples 512² PNG": sorted((REPO / "examples" / "images").glob("*/*.png")),
                "photos 1024² PNG": photos(Path(tmp), ".png"),
                "photos 1024² JPEG": photos(Path(tmp), ".jpg")}   # no checksum to check: the read alone
        print(f"{'images':<20} {'n':>3} {'Pillow only':>12} {'checks only':>12} {'load_rgb':>10} {'ratio':>6}")
        for label, paths in sets.items():
            for path in paths:  # the same pixels either way
                assert np.array_equal(pillow_only(path), load_rgb(path)), path
            plain = best_ms(pillow_only, paths, args.repeat)
            checks = best_ms(checks_only, paths, args.repeat)
            strict = best_ms(load_rgb, paths, args.repeat)
            print(f"{label:<20} {len(paths):>3} {plain:>10.2f}ms {checks:>10.2f}ms {strict:>8.2f}ms {strict / plain:>5.2f}x")


if __name__ == "__main__":
    main()
