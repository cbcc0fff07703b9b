"""Plain bars: a lone `I` on a line of its own that no look of the detector boxes, or that the recogniser reads `1`.

The detector's map barely responds to one plain vertical bar (a closing `I`, a lone `l`), so no look boxes it, and
the recogniser, where it does get a box, reads a bar as `1` as often as `I`. A bar drawn in the text's ink and
colour, one text line above or below a read line, alone in its row and shaped as a bar (an upright stem of the
text's stroke width, the height of its capitals, serifs only where they mirror each other, never a `1`'s flag) is
read here from its shape: a line `I` with `l` as an equal alternative (TR takes whichever the prompt asked for; a
plain bar is both), at `BAR_CONFIDENCE`; where a one-character line's box holds the bar, that line is read as a
bar instead (`_as_bar`). docs/metrics/tr_reading.md, Plain bars.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..api import OcrLine, text_corners
from ..api.ocr import sets_direction, text_angle

# below TR's stray_confidence (0.9): a bar is unsure evidence, never a sure line that makes photo detail beside it
# count as text; above its min_confidence (0.5)
BAR_CONFIDENCE = 0.8
BAR_LETTERS = ("I", "l")  # what a plain bar reads as; the first is an added bar's text
PITCH_SLACK = 0.3         # a bar's centre lies within this share of a line pitch of the next or previous row
STEP_RANGE = (1.1, 2.5)   # that pitch, in the line's capital heights (a title's pitch is no step for its small print)
CAP_RANGE = (0.8, 1.25)   # a bar's height, in the read line's capital height (an `i`'s stem is about 0.75)
RING = (0.6, 0.3)         # the rectangle around the bar, in capital heights (along, across the line), ...
RING_INK = 0.02           # ... at most this share of whose pixels are other ink
INK_MATCH = 0.35          # a bar's mean colour this near its line's letters', as a share of their distance from the ground
MIN_CONTRAST = 30         # grey levels between the line's ink and its background; below: no bar looked for there


def read_bars(image: np.ndarray, lines: tuple[OcrLine, ...]) -> tuple[OcrLine, ...]:
    """LINES with the plain bars of IMAGE (RGB or grey, uint8) read: each lone bar one row above or below a read
    line (`_bars_near`) is added as a line `I` (alternative `l`), or, where a one-character line's box holds it,
    that line is read as a bar (`_as_bar`)."""
    import cv2

    if not any(sets_direction(ln) for ln in lines):
        return lines
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) if image.ndim == 3 else image
    rgb = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2RGB)
    turn, size = _levelling(grey.shape, text_angle(list(lines)))
    warp = lambda a: cv2.warpAffine(a, turn, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)  # noqa: E731
    page = _Page(warp(grey.astype(np.float32)), warp(cv2.cvtColor(rgb.astype(np.float32) / 255, cv2.COLOR_RGB2Lab)),
                 np.zeros(size[::-1], np.uint8), [])
    glyph = [len(line.text.strip()) == 1 for line in lines]   # a bar may be what such a line read
    for line, one in zip(lines, glyph):
        corners = _apply(turn, np.asarray(line.box, np.float64))
        if not one:
            cv2.fillPoly(page.taken, [np.round(corners).astype(np.int32)], 1)
        page.boxes.append(corners.min(0).tolist() + corners.max(0).tolist())
    inks = {k: ink for k, (box, line) in enumerate(zip(page.boxes, lines))
            if _has_capitals(line.text) and (ink := _ink(page, box)) is not None}
    pitch = _pitch([box for box, line in zip(page.boxes, lines) if sets_direction(line)])
    held = [box for box, one in zip(page.boxes, glyph) if not one]
    found: list[np.ndarray] = []
    for k, ink in inks.items():
        for bar in _bars_near(page, page.boxes[k], ink, pitch, held):
            if all(np.linalg.norm(bar.mean(0) - other.mean(0)) > 3 for other in found):
                found.append(bar)
    out, added, back = list(lines), [], cv2.invertAffineTransform(turn)
    for bar in found:
        x, y = bar.mean(0)
        inside = [k for k, box in enumerate(page.boxes) if glyph[k] and box[0] <= x <= box[2] and box[1] <= y <= box[3]]
        if inside:
            out[inside[0]] = _as_bar(out[inside[0]])
        else:
            added.append(OcrLine(BAR_LETTERS[0], BAR_CONFIDENCE, text_corners(_apply(back, bar)), ((0, BAR_LETTERS[1], 1.0),)))
    return tuple(out) + tuple(added)


def _as_bar(line: OcrLine) -> OcrLine:
    """A one-character LINE whose box holds a lone bar, read as one: a bar letter it read stays, the others its
    alternatives; anything else (`1`, `一` for a bar read on its side) is read `I`, its confidence kept and `l` and
    what it read its alternatives (no rule takes a bar read `1` for a number; a `1` so plain that it is a bar is
    still one where the prompt asks for it)."""
    char = line.text.strip()
    at = line.text.index(char)
    read = char if char in BAR_LETTERS else BAR_LETTERS[0]
    known = {(k, alt) for k, alt, _ in line.alternatives}
    offered = tuple((at, letter, 1.0) for letter in (*BAR_LETTERS, char) if letter != read and (at, letter) not in known)
    return OcrLine(line.text[:at] + read + line.text[at + 1:], line.confidence, line.box, line.alternatives + offered)


@dataclass
class _Page:
    """The image levelled (text lines run along rows): grey, CIELAB, the pixels read lines cover, their bounds."""

    grey: np.ndarray
    lab: np.ndarray
    taken: np.ndarray
    boxes: list[list[float]]


@dataclass(frozen=True)
class _Ink:
    """A read line's ink: which side of `threshold` its grey lies (`dark`), the mean colour of its letters and the
    median colour around them (CIELAB), its capital height and stroke width."""

    dark: bool
    threshold: float
    colour: np.ndarray
    ground: np.ndarray
    cap: float
    stroke: float

    def mask(self, grey: np.ndarray) -> np.ndarray:
        return _side(grey, self.dark, self.threshold)

    def matches(self, colour: np.ndarray) -> bool:
        """Whether a part of mean COLOUR (CIELAB) is drawn in this ink: within INK_MATCH of the letters' colour, as a
        share of their distance from the ground (a patch of the photo is past the grey threshold, not the ink)."""
        return float(np.linalg.norm(colour - self.colour)) <= INK_MATCH * float(np.linalg.norm(self.ground - self.colour))


def _has_capitals(text: str) -> bool:
    """Whether a line's reading has a letter a capital high (a capital, a digit, an ascender): else its letters'
    height is the x-height, and a `!` or `i` would stand a capital high beside it."""
    return any(c.isupper() or c.isdigit() or c in "bdfhklt" for c in text)


def _side(grey: np.ndarray, dark: bool, threshold: float) -> np.ndarray:
    return ((grey < threshold) if dark else (grey > threshold)).astype(np.uint8)


def _levelling(shape: tuple[int, ...], angle: float) -> tuple[np.ndarray, tuple[int, int]]:
    """The affine map turning the image by -ANGLE about its centre into a canvas that holds all of it."""
    import cv2

    h, w = shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    cos, sin = abs(turn[0, 0]), abs(turn[0, 1])
    size = (int(math.ceil(w * cos + h * sin)), int(math.ceil(w * sin + h * cos)))
    turn[0, 2] += size[0] / 2 - w / 2
    turn[1, 2] += size[1] / 2 - h / 2
    return turn, size


def _apply(affine: np.ndarray, points: np.ndarray) -> np.ndarray:
    return points @ affine[:, :2].T + affine[:, 2]


def _crop(page: _Page, top: float, bottom: float, left: float, right: float) -> tuple[int, int, int, int] | None:
    """The rectangle clipped to the page, as ints (top, bottom, left, right); None where nothing of it is left."""
    height, width = page.grey.shape
    t, b, left_, r = max(int(top), 0), min(int(bottom), height), max(int(left), 0), min(int(right), width)
    return (t, b, left_, r) if b > t and r > left_ else None


def _pitch(boxes: list[list[float]]) -> float | None:
    """The median distance between the centres of a line and the nearest line below it that overlaps it along
    the text: the step from one row to the next; None where no two direction-setting lines lie so."""
    steps = []
    for x0, y0, x1, y1 in boxes:
        below = [(b[1] + b[3]) / 2 - (y0 + y1) / 2 for b in boxes
                 if min(x1, b[2]) - max(x0, b[0]) > 0 and (b[1] + b[3]) / 2 - (y0 + y1) / 2 > 0.5 * (y1 - y0)]
        if below:
            steps.append(min(below))
    return float(np.median(steps)) if steps else None


def _ink(page: _Page, box: list[float]) -> _Ink | None:
    """The line's ink, from its levelled box: the side of the grey levels (darker or lighter than the box's median)
    whose letter-sized parts are solid. Outlined text has letters on both sides (fill and outline); an outline
    encloses every letter, the fill only some (A, B, O, ...), so the side with fewer holes is the fill. None where
    no side has two letter-sized parts or the ink is faint."""
    import cv2

    rect = _crop(page, round(box[1]), round(box[3]), round(box[0]), round(box[2]))
    if rect is None or rect[1] - rect[0] < 6:
        return None
    top, bottom, left, right = rect
    region, colours, height = page.grey[top:bottom, left:right], page.lab[top:bottom, left:right], bottom - top
    median, best = float(np.median(region)), None
    for dark in (True, False):
        extreme = float(np.percentile(region, 8 if dark else 92))
        if abs(median - extreme) < MIN_CONTRAST:
            continue
        threshold = (median + extreme) / 2
        mask = _side(region, dark, threshold)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        letters = [k for k in range(1, n) if 0.35 * height <= stats[k, cv2.CC_STAT_HEIGHT] <= 1.05 * height
                   and stats[k, cv2.CC_STAT_WIDTH] <= 1.5 * stats[k, cv2.CC_STAT_HEIGHT]]
        if len(letters) < 2:
            continue
        holes = float(np.mean([_has_hole(labels, stats, k) for k in letters]))
        runs = [len(run) for row in mask for run in _runs(row)]
        ink = _Ink(dark, threshold, colours[np.isin(labels, letters)].mean(0), np.median(colours[mask == 0], 0),
                   float(np.percentile(stats[letters, cv2.CC_STAT_HEIGHT], 75)), float(np.median(runs)) if runs else 1.0)
        if best is None or holes < best[0]:
            best = (holes, ink)
    return best[1] if best else None


def _has_hole(labels: np.ndarray, stats: np.ndarray, k: int) -> bool:
    import cv2

    x, y, w, h = stats[k, :4]
    outside = (labels[y:y + h, x:x + w] != k).astype(np.uint8)
    n, _ = cv2.connectedComponents(np.pad(outside, 1, constant_values=1), connectivity=4)
    return n > 2   # more background parts than the one around the letter


def _runs(row: np.ndarray) -> list[np.ndarray]:
    on = np.flatnonzero(row)
    return [run for run in np.split(on, np.flatnonzero(np.diff(on) > 1) + 1) if len(run)] if len(on) else []


def _bars_near(page: _Page, box: list[float], ink: _Ink, pitch: float | None, held: list[list[float]]) -> list[np.ndarray]:
    """Bars in the rows one pitch above and below the line (levelled corners): in its ink, under or over the line
    itself (not past its ends), apart from the box of every line read as more than one character, not touching the
    searched window's edge, in a row no such line (HELD) holds near them (`_row_held`), and lone bars
    (`_is_lone_bar`)."""
    import cv2

    x0, y0, x1, y1 = box
    centre, cap = (y0 + y1) / 2, ink.cap
    step = float(np.clip(pitch if pitch is not None else 1.9 * cap, STEP_RANGE[0] * cap, STEP_RANGE[1] * cap))
    out = []
    for row in (centre - step, centre + step):
        rect = _crop(page, row - 0.6 * step - cap, row + 0.6 * step + cap, x0 - cap, x1 + cap)
        if rect is None:
            continue
        top, bottom, left, right = rect
        mask = ink.mask(page.grey[top:bottom, left:right])
        free = mask & (page.taken[top:bottom, left:right] == 0)   # parts are cut where such a line's box begins
        n, labels, stats, _ = cv2.connectedComponentsWithStats(free, connectivity=8)
        for k in range(1, n):
            x, y, w, h = (int(v) for v in stats[k, :4])
            mid_x, mid_y = left + x + w / 2, top + y + h / 2
            if (abs(mid_y - row) > PITCH_SLACK * step or not x0 <= mid_x <= x1
                    or x == 0 or y == 0 or x + w >= right - left or y + h >= bottom - top
                    or _row_held(held, mid_x, mid_y, step, cap)
                    or not _is_lone_bar(page, (top, left), mask, labels, stats, k, ink)):
                continue
            pad = 0.15 * h
            out.append(np.array([[left + x - pad, top + y - pad], [left + x + w + pad, top + y - pad],
                                 [left + x + w + pad, top + y + h + pad], [left + x - pad, top + y + h + pad]]))
    return out


def _is_lone_bar(page: _Page, origin: tuple[int, int], mask: np.ndarray, labels: np.ndarray, stats: np.ndarray, k: int,
                 ink: _Ink) -> bool:
    """Whether part K of a window (its top-left at ORIGIN on the page; MASK the ink there, LABELS its parts) is a
    lone plain bar of the text: a capital high (`CAP_RANGE`), shaped as a bar (`is_bar`), no other ink close around
    it (`RING`, `RING_INK`), and drawn in the text's colour (`INK_MATCH`)."""
    x, y, w, h = (int(v) for v in stats[k, :4])
    part = labels[y:y + h, x:x + w] == k
    top, left = origin
    return (CAP_RANGE[0] * ink.cap <= h <= CAP_RANGE[1] * ink.cap and is_bar(part, ink.stroke)
            and not _crowded(mask, labels, k, (x, y, w, h), ink.cap)
            and ink.matches(page.lab[top + y:top + y + h, left + x:left + x + w][part].mean(0)))


def _row_held(boxes: list[list[float]], x: float, y: float, step: float, cap: float) -> bool:
    """A read line in the bar's row (its centre within half a pitch across the text) reaching within 2 capital
    heights of it along the text: the bar is part of that row (a stem under a box cut tight, a highlight under a
    word), not a line of its own."""
    return any(abs((b[1] + b[3]) / 2 - y) < 0.5 * step and b[0] - 2 * cap <= x <= b[2] + 2 * cap for b in boxes)


def _crowded(mask: np.ndarray, labels: np.ndarray, k: int, rect: tuple[int, int, int, int], cap: float) -> bool:
    """Other ink in the rectangle `RING` capital heights around the part, more than `RING_INK` of its pixels: a stem
    of a word, grass, a stripe, not a glyph on its own."""
    x, y, w, h = rect
    along, across = int(round(RING[0] * cap)), int(round(RING[1] * cap))
    ya, yb, xa, xb = max(0, y - across), y + h + across, max(0, x - along), x + w + along
    ring = mask[ya:yb, xa:xb].astype(bool) & (labels[ya:yb, xa:xb] != k)
    return float(ring.mean()) > RING_INK


def is_bar(part: np.ndarray, stroke: float) -> bool:
    """A plain bar (I, l, |) drawn as PART (a boolean mask, rows top to bottom, text levelled): ink on every row, one
    run of it on each of the middle 60 %; a stem (its median width over the middle 60 % of rows) of 0.5-2.5 times the text's STROKE and at most 0.3
    of its height; straight (a slant up to 0.3, as in oblique faces; row centres off the fitted line by at most 0.3
    of the stem + 1 px); and at its ends serifs only where they stick out equally on both sides (a `1`'s flag, a
    `J`'s hook, an `L`'s foot do not), on both ends or neither (a `T`'s bar does not), each at most 1.5 stems."""
    height = part.shape[0]
    rows = [np.flatnonzero(r) for r in part]
    body = range(int(0.2 * height), int(0.8 * height) + 1)
    # the ends are measured by their outer ink: a serif turned and resampled may break into runs there
    if height < 6 or any(len(r) == 0 for r in rows) or any(np.any(np.diff(rows[i]) > 1) for i in body):
        return False
    widths = np.array([len(rows[i]) for i in body], float)
    stem = float(np.median(widths))
    if not 0.5 * stroke <= stem <= 2.5 * stroke + 1 or stem > 0.3 * height or widths.max() > stem + max(2.0, 0.5 * stem):
        return False
    centres = np.array([(r[0] + r[-1]) / 2 for r in rows])
    slope, offset = np.polyfit(np.array(body, float), centres[list(body)], 1)
    fitted = slope * np.arange(height) + offset
    if abs(slope) > 0.3 or np.abs(centres[list(body)] - fitted[list(body)]).max() > 0.3 * stem + 1:
        return False
    overhang = {}
    for end, span in (("top", range(int(0.2 * height))), ("bottom", range(int(0.8 * height) + 1, height))):
        overhang[end] = 0.0
        for i in span:
            left, right = fitted[i] - rows[i][0], rows[i][-1] - fitted[i]
            if abs(left - right) > max(2.0, 0.5 * stem, 0.35 * max(left, right)):
                return False   # a flag, a hook, a foot to one side
            overhang[end] = max(overhang[end], min(left, right) - stem / 2)
    return max(overhang.values()) <= 1.5 * stem + 1 and abs(overhang["top"] - overhang["bottom"]) <= max(1.0, 0.5 * stem)
