"""Lines the detector ran across a column gutter (docs/metrics/tr.md, Lines across a gutter).

Two columns under a title are read column by column where a blank band parts them (text_layout). Where the
detector runs one line of the left column and the line beside it in the right column into one box (`LIBRARY CLUB
SKATING` on a tuning poster, `LIBRARY CLUB` left and `SKATING` right), that box covers the band in its row and
the columns are read across from there. The rows next to it still show the band, so the box can be cut there;
which space of its text the gutter was is not in the box (the recogniser reads the gutter as one space), so each
space is offered and TR takes the cut that brings the reading nearer the expected text, as with seams.
"""
from __future__ import annotations

from ..api import OcrLine, text_corners
from .text_layout import LevelBox, blank_band, level_boxes, rows_of


def gutter_cuts(lines: list[OcrLine], column_gap: float) -> list[tuple[OcrLine, list[tuple[OcrLine, OcrLine]]]]:
    """Per line that covers a gutter: (the line, each way of cutting it at a space into the part left of the band
    and the part right of it). The band is the widest blank vertical band at least `column_gap` median line heights
    wide through the rows next to the line's own (the longest run of rows below it, then above it, that keeps one),
    and the line must span it with text on both sides."""
    if len(lines) < 3:
        return []
    boxes, median = level_boxes(lines)
    rows = rows_of(boxes, median)
    out = []
    for r, row in enumerate(rows):
        spaced = [box for box in row if " " in box[4].text.strip()]
        band = _band_beside(rows, r, column_gap * median) if spaced else None
        if band:
            out += [(box[4], _cuts(box[4], box, band)) for box in spaced if box[0] < band[0] and box[2] > band[1]]
    return out


def _band_beside(rows: list[list[LevelBox]], r: int, gap: float) -> tuple[float, float] | None:
    """The widest blank band wider than `gap` through the rows next to row r (rows below first, then above, as
    many as keep a band; at least one), or None."""
    below = above = 0
    while r + below + 1 < len(rows) and blank_band([b for row in rows[r + 1:r + below + 2] for b in row], gap):
        below += 1
    while r - above - 1 >= 0 and blank_band([b for row in rows[r - above - 1:r + below + 1] if row is not rows[r] for b in row], gap):
        above += 1
    if below + above == 0:
        return None
    return blank_band([b for row in rows[r - above:r + below + 1] if row is not rows[r] for b in row], gap)


def _cuts(line: OcrLine, box: LevelBox, band: tuple[float, float]) -> list[tuple[OcrLine, OcrLine]]:
    """The line cut at each space: the left part's box ends where the band starts, the right part's starts where it
    ends (along the line's own edges); the doubted characters go with their part."""
    c0, c1, c2, c3 = text_corners(line.box)
    span = box[2] - box[0]
    f1, f2 = (band[0] - box[0]) / span, (band[1] - box[0]) / span

    def at(p: tuple[float, float], q: tuple[float, float], f: float) -> tuple[float, float]:
        return p[0] + f * (q[0] - p[0]), p[1] + f * (q[1] - p[1])

    left_box = (c0, at(c0, c1, f1), at(c3, c2, f1), c3)
    right_box = (at(c0, c1, f2), c1, c2, at(c3, c2, f2))
    out = []
    for s, char in enumerate(line.text):
        if char != " " or not line.text[:s].strip() or not line.text[s + 1:].strip():
            continue
        left = OcrLine(line.text[:s], line.confidence, left_box, tuple(a for a in line.alternatives if a[0] < s))
        right = OcrLine(line.text[s + 1:], line.confidence, right_box,
                        tuple((i - s - 1, alt, share) for i, alt, share in line.alternatives if i > s))
        out.append((left, right))
    return out
