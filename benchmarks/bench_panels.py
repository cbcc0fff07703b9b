"""Panel detection (the CSE `panels` stage) on generated storyboards whose boxes are known exactly.

    python benchmarks/bench_panels.py [--boards 330] [--seed 30000] [--params '{"min_panel_frac": 1e9}']

Each board (vistar.synth.storyboards.make_storyboard) draws its shape from 1x2 ... 3x3, 1x4, 4x1, 2x4, its size
from 480x640, 1024², 768x1344, 1344x768, its gutter colour from white, black, grey, cream, navy, its gutter
width from 0 (panels touching) to 40 px, a border on 70 % of boards, a frame of 0/2/4 px, and panel sizes that
vary by ±0/25/40 %. Each is split three ways: with `grid=RxC`, with `panels=N` only (the shape must be found),
and with the grid after JPEG compression (quality 80). Reported: share with the right shape, and share whose
every box edge is within 2 px / 5 px of the truth, overall and per condition. --params overrides
`features.panels` (e.g. min_panel_frac 1e9 turns off taking exactly R-1 gutters wherever they are).
"""
from __future__ import annotations

import argparse
import collections
import io
import json

import numpy as np
from PIL import Image

from vistar.api import parse
from vistar.features.panels import PanelParams, PanelRequest, split_panels
from vistar.synth.storyboards import make_storyboard

SHAPES = [(1, 3), (3, 1), (2, 3), (3, 2), (1, 4), (4, 1), (2, 2), (3, 3), (1, 2), (2, 1), (2, 4)]
SIZES = [(480, 640), (1024, 1024), (768, 1344), (1344, 768)]
COLOURS = {"white": (255, 255, 255), "black": (0, 0, 0), "grey": (128, 128, 128), "cream": (240, 225, 190), "navy": (20, 30, 70)}


def jpeg(image: np.ndarray, quality: int = 80) -> np.ndarray:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "JPEG", quality=quality)
    return np.asarray(Image.open(buffer).convert("RGB"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=330)
    parser.add_argument("--seed", type=int, default=30000)
    parser.add_argument("--params", type=json.loads, default={})
    args = parser.parse_args()
    params = parse(PanelParams, args.params, "--params")
    rng = np.random.default_rng(args.seed)
    tally = collections.defaultdict(lambda: np.zeros(4, int))   # boards, right shape, boxes <= 2 px, <= 5 px
    for i in range(args.boards):
        rows, cols = SHAPES[i % len(SHAPES)]
        height, width = SIZES[rng.integers(len(SIZES))]
        colour = list(COLOURS)[rng.integers(len(COLOURS))]
        gutter = int(rng.choice([0, 1, 2, 3, 6, 12, 24, 40]))
        gutters_y = [int(max(0, gutter + rng.integers(-1, 3))) if gutter else 0 for _ in range(rows - 1)]
        gutters_x = [int(max(0, gutter + rng.integers(-1, 3))) if gutter else 0 for _ in range(cols - 1)]
        border = tuple(int(v) for v in rng.integers(0, 40, 4)) if rng.random() < 0.7 else (0, 0, 0, 0)
        frame = int(rng.choice([0, 0, 2, 4]))
        uneven = float(rng.choice([0.0, 0.25, 0.4]))
        board = make_storyboard(rows, cols, height, width, seed=args.seed + i, border=border, gutters_y=gutters_y,
                                gutters_x=gutters_x, gutter_colour=COLOURS[colour], frame=frame, uneven=uneven)
        for mode, image, request in (("grid", board.image, PanelRequest(rows * cols, rows, cols)),
                                     ("count", board.image, PanelRequest(rows * cols)),
                                     ("grid+jpeg", jpeg(board.image), PanelRequest(rows * cols, rows, cols))):
            layout = split_panels(image, request, params)
            shape = (layout.rows, layout.cols) == (rows, cols)
            error = int(np.abs(layout.boxes - board.boxes).max()) if shape else 10 ** 6
            conditions = ["all", f"gutter {'none (touching)' if gutter == 0 else 'present'}", f"uneven ±{uneven:.0%}"]
            if frame:
                conditions.append("frame, single row or column" if 1 in (rows, cols) else "frame, grid")
            for condition in conditions:
                tally[(mode, condition)] += (1, shape, error <= 2, error <= 5)
    print(f"{'mode':10s} {'condition':28s} {'boards':>6s} {'shape':>7s} {'<=2px':>7s} {'<=5px':>7s}")
    for (mode, condition), (n, shape, px2, px5) in sorted(tally.items()):
        print(f"{mode:10s} {condition:28s} {n:6d} {shape / n:7.1%} {px2 / n:7.1%} {px5 / n:7.1%}")


if __name__ == "__main__":
    main()
