"""The order people read OCR lines in (rows of lines levelled by the dominant text angle, or columns under a title),
from the lines' own angle and height (vistar.api.ocr, which the OCR stage shares). Used by TR (docs/metrics/tr.md,
Reading order)."""
from __future__ import annotations

import math

from ..api import OcrLine
from ..api.ocr import line_height, text_angle

LevelBox = tuple[float, float, float, float, OcrLine]   # a line's bounds once levelled, and the line


def reading_order(lines: list[OcrLine], columns: bool = False, column_gap: float = 0.4) -> list[OcrLine]:
    """Lines in reading order, independent of the detector's order and of the text's rotation.

    Every box is turned by minus the dominant text angle, so lines tilted by ±15° become level, then grouped
    into rows: a line joins a row when its centre is within half a median line height of the row's mean centre;
    rows top to bottom, left to right within a row. `columns`: the longest run of consecutive rows that a blank
    vertical band at least `column_gap` median line heights wide splits, with a line on each side in its first
    row, is read column by column (left to right, each to its end, recursively), the rows above and below it as
    before (a title over two columns)."""
    if not lines:
        return []
    boxes, median = level_boxes(lines)
    ordered = _by_columns(boxes, median, column_gap * median) if columns else _flat(rows_of(boxes, median))
    return [box[4] for box in ordered]


def level_boxes(lines: list[OcrLine]) -> tuple[list[LevelBox], float]:
    """Each line's bounds (x0, y0, x1, y1, line) after turning by minus the dominant text angle, so that the
    lines lie level, and the median line height."""
    turn = math.radians(-text_angle(lines))
    cos, sin = math.cos(turn), math.sin(turn)
    boxes = []
    for line in lines:
        xs, ys = zip(*((x * cos - y * sin, x * sin + y * cos) for x, y in line.box))
        boxes.append((min(xs), min(ys), max(xs), max(ys), line))
    heights = sorted(line_height(ln) for ln in lines)
    return boxes, max(1.0, heights[len(heights) // 2])


def nearest_gap(box: LevelBox, others: list[LevelBox]) -> float:
    """Distance from `box` to the nearest of `others` in the levelled frame (the larger of the horizontal and the
    vertical gap: 0 or less when they touch or overlap), what the glyph and clutter filters measure in line heights."""
    return min(max(o[0] - box[2], box[0] - o[2], o[1] - box[3], box[1] - o[3]) for o in others)


def _by_columns(boxes: list[LevelBox], median: float, gap: float) -> list[LevelBox]:
    """Rows, except the longest run of rows that starts as columns, which is read column by column. A cut through
    all lines is not enough: a title centred over a narrow left column lies wholly right of the gutter and would
    be read as the head of the right column."""
    if len(boxes) < 2:
        return boxes
    rows = rows_of(boxes, median)
    runs = [(a, b) for a in range(len(rows)) for b in range(a + 2, len(rows) + 1) if _columns_start(rows[a:b], gap)]
    if not runs:
        return _flat(rows)
    a, b = max(runs, key=lambda run: (run[1] - run[0], -run[0]))  # the longest run, the topmost of equals
    body = _flat(rows[a:b])
    cut = _column_cut(body, gap)
    assert cut is not None   # the run was chosen because its rows split at a cut (_columns_start)
    return [box for part in (_flat(rows[:a]), [x for x in body if x[2] <= cut], [x for x in body if x[2] > cut],
                             _flat(rows[b:])) for box in _by_columns(part, median, gap)]


def _columns_start(rows: list[list[LevelBox]], gap: float) -> bool:
    """These rows split into columns, which start together: the first row has a line on each side of the cut
    (a title set off to one side is not a column)."""
    cut = _column_cut(_flat(rows), gap)
    return cut is not None and min(b[2] for b in rows[0]) <= cut < max(b[2] for b in rows[0])


def _column_cut(boxes: list[LevelBox], min_gap: float) -> float | None:
    """Where the widest blank vertical band wider than `min_gap` starts, or None."""
    band = blank_band(boxes, min_gap)
    return None if band is None else band[0]


def blank_band(boxes: list[LevelBox], min_gap: float) -> tuple[float, float] | None:
    """(start, end) of the widest blank vertical band wider than `min_gap` between the boxes' spans, or None."""
    spans = sorted((b[0], b[2]) for b in boxes)
    best, band, reach = min_gap, None, spans[0][1] if spans else 0.0
    for start, end in spans[1:]:
        if start - reach > best:
            best, band = start - reach, (reach, start)
        reach = max(reach, end)
    return band


def rows_of(boxes: list[LevelBox], median: float) -> list[list[LevelBox]]:
    def centre(b: LevelBox) -> float:
        return (b[1] + b[3]) / 2

    rows: list[list[LevelBox]] = []
    for box in sorted(boxes, key=lambda b: (centre(b), b[0])):
        if rows and abs(centre(box) - sum(map(centre, rows[-1])) / len(rows[-1])) <= median / 2:
            rows[-1].append(box)
        else:
            rows.append([box])
    return [sorted(row, key=lambda b: b[0]) for row in rows]


def _flat(rows: list[list[LevelBox]]) -> list[LevelBox]:
    return [box for row in rows for box in row]
