"""What the `ocr` stage gives TR: recognised lines with their boxes and confidences, and where they run (their
angle, height, width: what the stage's plain bars and TR's reading order both measure)."""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class OcrLine:
    text: str
    confidence: float
    box: tuple[tuple[float, float], ...]  # 4 corner points (x, y), clockwise from top-left
    # what the recogniser was torn about: (index into text, another class, its share of the read class's posterior)
    # for the characters where another class reached features.ocr's floor, and the same letter with a mark where the
    # stage's second reading of the line read it so (share 1); empty for a clean reading
    alternatives: tuple[tuple[int, str, float], ...] = ()

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        xs, ys = [p[0] for p in self.box], [p[1] for p in self.box]
        return min(xs), min(ys), max(xs), max(ys)


def text_corners(box: Iterable[Sequence[float]]) -> tuple[tuple[float, float], ...]:
    """A text box's 4 corners clockwise (y down) from the corner where its rightward edge starts, so that edges
    0-1 and 3-2 run along the text and 0-3, 1-2 across it. RapidOCR orders a box's corners by x: a tall narrow
    box (a lone "1") tilted by more than about 14 degrees comes with a side edge first, and read as given its
    width and height swap and its direction is off by 90 degrees."""
    pts = [(float(x), float(y)) for x, y in list(box)[:4]]
    if sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1])) < 0:
        pts.reverse()   # counter-clockwise in image coordinates
    k = min(range(4), key=lambda i: abs(math.atan2(pts[(i + 1) % 4][1] - pts[i][1], pts[(i + 1) % 4][0] - pts[i][0])))
    return tuple(pts[k:] + pts[:k])


@dataclass(frozen=True)
class OcrResult:
    lines: tuple[OcrLine, ...]
    width: int
    height: int
    alphabet: frozenset[str] | None = None  # what the recogniser can output (None: unknown); TR skips other scripts


def line_angle(line: OcrLine) -> float:
    """Direction of the line's top and bottom edges, degrees (y down, so clockwise-tilted text is positive)."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = text_corners(line.box)
    return math.degrees(math.atan2((y1 - y0) + (y2 - y3), (x1 - x0) + (x2 - x3)))


def line_height(line: OcrLine) -> float:
    """The box's own height (left and right edges), not its axis-aligned extent: unchanged by rotation."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = text_corners(line.box)
    return (math.dist((x0, y0), (x3, y3)) + math.dist((x1, y1), (x2, y2))) / 2


def line_width(line: OcrLine) -> float:
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = text_corners(line.box)
    return (math.dist((x0, y0), (x1, y1)) + math.dist((x3, y3), (x2, y2))) / 2


def sets_direction(line: OcrLine) -> bool:
    """Whether the line's angle votes for the text's: at least twice as wide as high (a lone glyph's box says
    little about direction) and under 45 degrees."""
    return line_width(line) >= 2 * line_height(line) and abs(line_angle(line)) < 45


def text_angle(lines: list[OcrLine]) -> float:
    """The dominant text angle: the width-weighted median of the angles of the lines that `sets_direction`; 0
    when there is none."""
    votes = sorted((line_angle(ln), line_width(ln)) for ln in lines if sets_direction(ln))
    half, seen = sum(w for _, w in votes) / 2, 0.0
    for angle, weight in votes:
        seen += weight
        if seen >= half:
            return angle
    return 0.0
