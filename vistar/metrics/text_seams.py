"""Seams: letters the detector read twice where two of its boxes overlap (docs/metrics/tr.md, Letters read twice).

The detector sometimes cuts one run of ink into two boxes that overlap along the text, and the recogniser reads the
letters in the overlap in both: `HARBOUR` and `R CITY` for HARBOUR CITY, `Grüße` and `e Bäckerei`. Neighbouring
words' padded boxes overlap as well (up to 1.5 letters apart on the tuning posters) and may start and end with the
same letter by chance (`WATER` and `records`), so overlap and repeat alone do not say which it is. A seam is
therefore only offered (`repeated_seams`) and TR reads it once where that brings the reading nearer the expected
text, as it takes the recogniser's doubted letters (text_doubt).
"""
from __future__ import annotations

from typing import NamedTuple

from ..api import OcrLine, text_corners
from ..api.ocr import line_width
from .text_layout import level_boxes, rows_of


class Seam(NamedTuple):
    left: int       # index of the line before the seam in its row
    right: int      # index of the line after it
    repeat: int     # characters the right line repeats of the left one's end


def repeated_seams(lines: list[OcrLine]) -> list[Seam]:
    """Each pair of row neighbours whose boxes overlap along the row and where the right line's text starts with
    the last k letters of the left one's (compared casefolded; the longest such k), k − 1 of them lying wholly
    in the overlap (a repeat longer than the overlap holds is two words that happen to share letters)."""
    if len(lines) < 2:
        return []
    index = {id(line): k for k, line in enumerate(lines)}
    boxes, median = level_boxes(lines)
    out = []
    for row in rows_of(boxes, median):
        for a, b in zip(row, row[1:]):
            left, right = a[4], b[4]
            overlap = a[2] - b[0]
            if overlap <= 0 or not left.text or not right.text:
                continue
            width = min(line_width(left) / len(left.text), line_width(right) / len(right.text))
            if width <= 0:   # a box with no length along the text: nothing lies in an overlap
                continue
            fits = [k for k in range(1, min(len(left.text), len(right.text)) + 1)
                    if k - 1 < overlap / width and left.text[-k:].casefold() == right.text[:k].casefold()
                    and any(c.isalnum() for c in right.text[:k])]
            if fits:
                out.append(Seam(index[id(left)], index[id(right)], max(fits)))
    return out


def read_once(lines: list[OcrLine], seams: list[Seam]) -> list[OcrLine]:
    """The lines with each seam's two lines made one: the left text, then the right one less its repeat; the box
    from the left box's start to the right box's end, the lower confidence, both lines' doubted characters."""
    after = {s.left: s for s in seams}
    joined = {s.right for s in seams}
    out = []
    for k, line in enumerate(lines):
        if k in joined:
            continue
        while k in after:
            seam = after[k]
            right = lines[seam.right]
            shift = len(line.text) - seam.repeat
            start, end = text_corners(line.box), text_corners(right.box)
            line = OcrLine(line.text + right.text[seam.repeat:], min(line.confidence, right.confidence),
                           (start[0], end[1], end[2], start[3]),
                           line.alternatives + tuple((i + shift, alt, share) for i, alt, share in right.alternatives
                                                     if i >= seam.repeat))
            k = seam.right
        out.append(line)
    return out
