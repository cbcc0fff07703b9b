"""Synthetic storyboards with known panel boxes: uneven outer borders, uneven gutters, uneven panels.

Panel content is textured noise with random shapes, so no content line is uniform across a whole panel
(which a real gutter is); optionally each panel shows a "subject" disk, for end-to-end runs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Storyboard:
    image: np.ndarray      # HxWx3 uint8
    boxes: np.ndarray      # (N, 4) int x0, y0, x1, y1 (end-exclusive), reading order
    rows: int
    cols: int


def _spans(total: int, border: tuple[int, int], gutters: list[int], weights: np.ndarray) -> list[tuple[int, int]]:
    inner = total - border[0] - border[1] - sum(gutters)
    sizes = np.floor(inner * weights / weights.sum()).astype(int)
    sizes[-1] = inner - sizes[:-1].sum()
    spans, pos = [], border[0]
    for i, size in enumerate(sizes):
        spans.append((pos, pos + int(size)))
        pos += int(size) + (gutters[i] if i < len(gutters) else 0)
    return spans


def _panel_content(h: int, w: int, rng: np.random.Generator, subject: bool) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    base = rng.uniform(60, 200, size=3)
    slope = rng.uniform(-0.4, 0.4, size=(2, 3))
    img = base + yy[..., None] * slope[0] * 100 / max(h, 1) + xx[..., None] * slope[1] * 100 / max(w, 1)
    img += rng.normal(0, 18, size=(h, w, 3))
    for _ in range(3):
        x0, y0 = rng.integers(0, max(1, w - 4)), rng.integers(0, max(1, h - 4))
        x1, y1 = x0 + rng.integers(4, max(5, w // 2)), y0 + rng.integers(4, max(5, h // 2))
        img[y0:y1, x0:x1] = img[y0:y1, x0:x1] * 0.5 + rng.uniform(0, 255, size=3) * 0.5
    if subject:
        r = max(3, min(h, w) // 6)
        cy, cx = rng.integers(r, max(r + 1, h - r)), rng.integers(r, max(r + 1, w - r))
        disk = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
        img[disk] = (210, 40, 40)
    return np.clip(img, 0, 255)


def make_storyboard(rows: int = 2, cols: int = 2, height: int = 480, width: int = 640, *, seed: int = 0,
                    border: tuple[int, int, int, int] | None = None, gutters_y: list[int] | None = None,
                    gutters_x: list[int] | None = None, gutter_colour: tuple[int, int, int] = (255, 255, 255),
                    frame: int = 0, uneven: float = 0.25, subject: bool = False,
                    row_weights: list[float] | None = None, col_weights: list[float] | None = None) -> Storyboard:
    """A storyboard with known boxes. `border` is (top, right, bottom, left); gutters default to random
    widths; panel sizes vary by ±`uneven`, or follow `row_weights` / `col_weights` (relative sizes) when
    given; `frame` draws a dark outline of that width inside each panel (the outline belongs to the panel
    box, as a reader would see it). Weights and gutters of the wrong count raise ValueError (the grid's boxes
    would not be the ROWS × COLS the storyboard claims)."""
    for name, given, want in (("row_weights", row_weights, rows), ("gutters_y", gutters_y, rows - 1),
                              ("col_weights", col_weights, cols), ("gutters_x", gutters_x, cols - 1)):
        if given is not None and len(given) != want:
            raise ValueError(f"{name}: {len(given)} given, a {rows}×{cols} grid needs {want}")
    rng = np.random.default_rng(seed)
    border = border if border is not None else tuple(int(v) for v in rng.integers(4, 30, size=4))
    gutters_y = gutters_y if gutters_y is not None else [int(v) for v in rng.integers(6, 24, size=rows - 1)]
    gutters_x = gutters_x if gutters_x is not None else [int(v) for v in rng.integers(6, 24, size=cols - 1)]
    heights = 1 + rng.uniform(-uneven, uneven, rows)
    widths = 1 + rng.uniform(-uneven, uneven, cols)
    row_spans = _spans(height, (border[0], border[2]), gutters_y, np.asarray(row_weights, float) if row_weights else heights)
    col_spans = _spans(width, (border[3], border[1]), gutters_x, np.asarray(col_weights, float) if col_weights else widths)
    image = np.empty((height, width, 3), np.float32)
    image[:] = gutter_colour
    boxes = []
    for y0, y1 in row_spans:
        for x0, x1 in col_spans:
            panel = _panel_content(y1 - y0, x1 - x0, rng, subject)
            if frame:
                panel[:frame], panel[-frame:], panel[:, :frame], panel[:, -frame:] = 20, 20, 20, 20
            image[y0:y1, x0:x1] = panel
            boxes.append((x0, y0, x1, y1))
    return Storyboard(image.round().astype(np.uint8), np.array(boxes, dtype=int), rows, cols)
