"""Panel layout of a storyboard image: where each of the N panels is, found from the pixels when possible.

Generated storyboards rarely have the even gutters a template would: borders differ per side, gutters
differ in width, panels differ in size. Each axis is therefore searched for *gutter bands* — runs of
lines that are uniform across the image (a white or black gutter, or a drawn frame line) — and for
*edge lines* (a strong step across the whole image where panels touch without a gutter). Bands that
touch the image edge are outer borders; among the inner ones, the band nearest each cut a regular grid
would put there (within `tolerance_frac` of a panel's size) becomes that cut. An axis whose cuts are not
all found falls back to the regular grid over the area inside the detected borders, and the layout
records per axis which of the two happened. Layouts are grids (R rows × C columns); a storyboard whose
rows are split differently falls back to the regular grid on that axis.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..api import FeatureStage, PanelLayout, StageContext, StageInput


@dataclass(frozen=True)
class PanelParams:
    """`features.panels` (docs/metrics/cse.md)."""

    uniform_std: float = 8.0      # a line is uniform when its per-channel std (0–255) is below this
    edge_step: float = 40.0       # a pixel step (0–255) that counts as an edge between adjacent lines
    edge_frac: float = 0.9        # fraction of a line's pixels that must step for an edge line
    edge_contrast: float = 0.5    # ... and by how much that fraction must exceed the median line's
    merge_gap: int = 2            # uniform runs this close (in lines) merge into one band (frame line + gutter)
    tolerance_frac: float = 0.3   # a band may sit this fraction of a panel's size away from the regular cut
    min_panel_frac: float = 0.25  # exactly R-1 gutters are taken wherever they are if no panel gets below this × the mean


@dataclass(frozen=True)
class PanelRequest:
    """What the prompt asks for: N panels, and the grid shape when it says so."""

    count: int
    rows: int | None = None
    cols: int | None = None


_GRID = re.compile(r"^\s*(\d+)\s*[x×*]\s*(\d+)\s*$", re.IGNORECASE)


def panel_request(controls: dict) -> PanelRequest:
    """`grid="RxC"` (rows × columns), `panels=N`, else one panel per sub-prompt in `shots`."""
    rows = cols = None
    grid = controls.get("grid")
    if grid not in (None, ""):
        match = _GRID.match(str(grid))
        if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
            raise ValueError(f"control 'grid': expected ROWSxCOLS like \"2x3\", got {grid!r}")
        rows, cols = int(match.group(1)), int(match.group(2))
    count = controls.get("panels")
    if count not in (None, ""):
        if isinstance(count, bool) or (isinstance(count, float) and not count.is_integer()):
            raise ValueError(f"control 'panels': expected a whole number, got {count!r}")
        try:
            count = int(count)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"control 'panels': expected a whole number, got {count!r}") from None
        if count < 1:
            raise ValueError(f"control 'panels': must be at least 1, got {count}")
        if rows is not None and rows * cols != count:
            raise ValueError(f"controls disagree: panels={count} but grid={grid!r} has {rows * cols} panels")
    elif rows is not None:
        count = rows * cols
    else:
        shots = controls.get("shots")
        count = len(shots) if isinstance(shots, list) else (1 if shots else 0)
        if count < 1:
            raise ValueError("no panel count: give 'panels', 'grid' or a 'shots' list")
    return PanelRequest(count, rows, cols)


def _line_profiles(image: np.ndarray, axis: int, keep: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per line along `axis` (0: rows, 1: columns): max-over-channels std, and the fraction of edge steps."""
    img = image.astype(np.float32)
    lines = img if axis == 0 else img.transpose(1, 0, 2)   # (L, P, 3): L lines of P pixels
    if keep is not None and keep.any():
        lines = lines[:, keep]
    std = lines.std(axis=1).max(axis=1)
    step = np.abs(np.diff(lines, axis=0)).max(axis=2)      # (L-1, P)
    return std, step


def _bands(std: np.ndarray, step: np.ndarray, p: PanelParams) -> list[tuple[int, int]]:
    """Gutter bands [start, end) along one axis: merged uniform runs, plus zero-width edge lines."""
    uniform = std < p.uniform_std
    runs: list[list[int]] = []
    for i in np.flatnonzero(uniform):
        if runs and i - runs[-1][1] <= p.merge_gap:
            runs[-1][1] = i + 1
        else:
            runs.append([int(i), int(i) + 1])
    frac = (step > p.edge_step).mean(axis=1)
    # an edge line must stand out from the typical line: in busy texture every line has many steps
    distinct = frac >= np.median(frac) + p.edge_contrast if len(frac) else frac.astype(bool)
    edge_lines = np.flatnonzero((frac >= p.edge_frac) & distinct) + 1
    gap = p.merge_gap
    for cut in edge_lines:  # the step at a gutter's own boundary is part of that gutter, not another cut
        if not any(s - gap <= cut <= e + gap for s, e in runs):
            runs.append([int(cut), int(cut)])
    return sorted((s, e) for s, e in runs)


def _axis_spans(std: np.ndarray, step: np.ndarray, parts: int, p: PanelParams) -> tuple[list[tuple[int, int]], str]:
    """Spans of `parts` panels along one axis and whether they were detected or fall back to the grid."""
    size = len(std)
    bands = _bands(std, step, p)
    lo, hi = 0, size
    gap = int(p.merge_gap)
    if bands and bands[0][0] <= gap and bands[0][1] > bands[0][0]:
        lo = bands[0][1]
    if bands and bands[-1][1] >= size - gap and bands[-1][1] > bands[-1][0]:
        hi = bands[-1][0]
    if hi - lo < parts:          # nothing but border: no content to split
        lo, hi = 0, size
    inner = [b for b in bands if b[0] > lo - 1 and b[1] < hi + 1 and lo < b[0] + (b[1] - b[0]) / 2 < hi]
    pitch = (hi - lo) / parts
    # Exactly the number of gutters asked for (else, with no gutter at all, of edge lines): take them wherever
    # they are. Panels of uneven size put a cut further from the regular grid than the tolerance allows, and a
    # full-width uniform run (or edge) is rare inside panel content.
    gutters = [b for b in inner if b[1] > b[0]]
    edges = [b for b in inner if b[1] == b[0]]
    for exact in (gutters, edges if not gutters else []):
        if parts > 1 and len(exact) == parts - 1:
            cuts = [lo] + [x for b in exact for x in b] + [hi]
            spans = [(cuts[2 * i], cuts[2 * i + 1]) for i in range(parts)]
            if min(e - s for s, e in spans) >= p.min_panel_frac * pitch:
                return spans, "detected"
    chosen: list[tuple[int, int]] = []
    for k in range(1, parts):
        expected = lo + k * pitch
        free = [b for b in inner if not chosen or b[0] >= chosen[-1][1]]
        near = [b for b in free if abs((b[0] + b[1]) / 2 - expected) <= p.tolerance_frac * pitch]
        if not near:
            break
        # a uniform gutter beats a bare edge line (a frame or a strong edge inside a panel)
        chosen.append(min(near, key=lambda b: (b[1] == b[0], abs((b[0] + b[1]) / 2 - expected), b[0])))
    if len(chosen) == parts - 1:
        edges = [lo] + [x for b in chosen for x in b] + [hi]
        spans = [(edges[2 * i], edges[2 * i + 1]) for i in range(parts)]
        if all(e > s for s, e in spans):
            return spans, "detected"
    cuts = [round(lo + k * pitch) for k in range(parts + 1)]
    return [(cuts[i], cuts[i + 1]) for i in range(parts)], "grid"


def _keep_mask(size: int, spans: list[tuple[int, int]]) -> np.ndarray:
    keep = np.zeros(size, bool)
    for s, e in spans:
        keep[s:e] = True
    return keep


def _layout(image: np.ndarray, rows: int, cols: int, p: PanelParams) -> PanelLayout:
    h, w = image.shape[:2]
    row_spans, row_method = _axis_spans(*_line_profiles(image, 0, None), rows, p)
    col_spans, col_method = _axis_spans(*_line_profiles(image, 1, None), cols, p)
    # Second pass: look for each axis's gutters only inside the other axis's panels, so a gutter of a
    # different colour (or a frame line) crossing it does not hide it.
    if row_method == "grid" and col_method == "detected":
        row_spans, row_method = _axis_spans(*_line_profiles(image, 0, _keep_mask(w, col_spans)), rows, p)
    if col_method == "grid" and row_method == "detected":
        col_spans, col_method = _axis_spans(*_line_profiles(image, 1, _keep_mask(h, row_spans)), cols, p)
    boxes = np.array([[x0, y0, x1, y1] for y0, y1 in row_spans for x0, x1 in col_spans], dtype=int)
    return PanelLayout(boxes, rows, cols, row_method, col_method)


def _shapes(request: PanelRequest, h: int, w: int) -> list[tuple[int, int]]:
    """Grid shapes R×C = N that fit an H×W image (at least a pixel per panel); only R ≤ H is tried."""
    if request.rows is not None:
        return [(request.rows, request.cols)]
    n = request.count
    return [(r, n // r) for r in range(1, min(n, h) + 1) if n % r == 0 and n // r <= w]


def split_panels(image: np.ndarray, request: PanelRequest, p: PanelParams = PanelParams()) -> PanelLayout:
    """The panel layout of `image`. Without a grid shape, every R×C = N is tried: the one with the most
    detected axes wins, then the one whose panels are closest to square (fewer rows on a tie)."""
    h, w = image.shape[:2]
    if request.count > h * w:
        raise ValueError(f"control 'panels': {request.count} panels are more than a {w}x{h} image can hold "
                         f"(at most {h * w}, one pixel each)")
    best, best_key = None, None
    for rows, cols in _shapes(request, h, w):
        if rows > h or cols > w:
            continue
        layout = _layout(image, rows, cols, p)
        detected = (layout.row_method == "detected") + (layout.col_method == "detected")
        aspect_gap = abs(np.log((w / cols) / (h / rows)))
        key = (-detected, round(float(aspect_gap), 6), rows)
        if best_key is None or key < best_key:
            best, best_key = layout, key
    if best is None:
        raise ValueError(f"{request.count} panels do not fit a {w}x{h} image")
    return best


def _compute(batch: list[StageInput], ctx: StageContext) -> list:
    params = ctx.params("panels", PanelParams)
    out = []
    for item in batch:
        try:
            out.append(split_panels(item.image, panel_request(item.controls), params))
        except ValueError as exc:
            out.append(exc)
    return out


STAGE = FeatureStage(name="panels", version="2", compute=_compute, params=PanelParams)
