"""OCR lines built by hand: rotated boxes and a tilted three-line poster, for TR's line-filtering tests."""
from __future__ import annotations

import math

from vistar.api import OcrLine, OcrResult


def rotated(text: str, cx: float, cy: float, w: float, h: float, angle: float, conf: float = 0.99) -> OcrLine:
    """A w×h box centred at (cx, cy) whose top edge runs at `angle` degrees (y down), corners clockwise from top-left."""
    a = math.radians(angle)
    ux, uy, vx, vy = math.cos(a), math.sin(a), -math.sin(a), math.cos(a)
    return OcrLine(text, conf, tuple((cx + sx * w / 2 * ux + sy * h / 2 * vx, cy + sx * w / 2 * uy + sy * h / 2 * vy)
                                     for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))))


def poster(*extra: OcrLine) -> OcrResult:
    """Three lines tilted by 8°, read surely, plus `extra`."""
    text = (rotated("FRESH", 500, 300, 200, 40, 8.0), rotated("COFFEE", 500, 360, 240, 40, 8.0),
            rotated("DAILY", 500, 420, 200, 40, 8.0))
    return OcrResult(text + extra, 1000, 1000)
