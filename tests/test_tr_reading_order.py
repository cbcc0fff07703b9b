"""Reading order of hand-placed OCR boxes whose true order is known: titles over columns of unequal width."""
from __future__ import annotations

import math

import pytest

from vistar.api import OcrLine
from vistar.metrics.text_layout import reading_order


def turned(text: str, x: float, y: float, angle: float, w: float, h: float = 36, pivot=(500, 500)) -> OcrLine:
    """A w×h box at (x, y) turned by `angle` degrees about `pivot` (the whole poster turns together)."""
    a, (px, py) = math.radians(angle), pivot
    corners = ((x, y), (x + w, y), (x + w, y + h), (x, y + h))
    return OcrLine(text, 0.99, tuple((px + (cx - px) * math.cos(a) - (cy - py) * math.sin(a),
                                      py + (cx - px) * math.sin(a) + (cy - py) * math.cos(a)) for cx, cy in corners))


@pytest.mark.parametrize("angle", [0, -13, 13])
def test_title_over_a_narrow_left_column_stays_the_title(angle):
    # A centred two-line title lies wholly right of the gutter when the left column is narrow: a cut through all
    # lines put the title at the head of the right column ("today FRESH CLUB ORGANIC A ...": seen on posters)
    title = [turned("ORGANIC", 430, 300, angle, w=140), turned("A", 485, 350, angle, w=30)]
    left = [turned(t, 240, 400 + 50 * k, angle, w=100) for k, t in enumerate(("today", "FRESH", "CLUB"))]
    right = [turned(t, 420, 400 + 50 * k, angle, w=330) for k, t in enumerate(("MARKET records FRESH", "SHOW ORGANIC today"))]
    lines = right[::-1] + left + title[::-1]
    expected = [ln.text for ln in title + left + right]
    assert [ln.text for ln in reading_order(lines, columns=True)] == expected


def test_rows_below_the_columns_are_read_after_both_columns():
    title = [turned("SUMMER MARKET", 380, 300, 0, w=260)]
    left = [turned(t, 250, 350 + 50 * k, 0, w=200) for k, t in enumerate(("FRESH BREAD", "LOCAL HONEY"))]
    right = [turned(t, 560, 350 + 50 * k, 0, w=200) for k, t in enumerate(("LIVE MUSIC", "FREE ENTRY"))]
    footer = [turned("OPEN LATE", 420, 450, 0, w=180)]
    order = [ln.text for ln in reading_order(footer + right + left + title, columns=True)]
    assert order == ["SUMMER MARKET", "FRESH BREAD", "LOCAL HONEY", "LIVE MUSIC", "FREE ENTRY", "OPEN LATE"]


def test_a_single_column_is_read_row_by_row_with_columns_on():
    lines = [turned(t, 300, 300 + 50 * k, 8, w=200 + 40 * k) for k, t in enumerate(("ONE", "TWO", "THREE"))]
    assert [ln.text for ln in reading_order(lines[::-1], columns=True)] == ["ONE", "TWO", "THREE"]
