"""Which OCR lines TR reads: not those the recogniser is unsure of, specks, or photo detail read as text (across
the text's lines, decorations, unsure readings of no asked word off the text). They live in the metric, not the OCR
stage, so they can be changed (or calibrated) and rescored without reading again; each is calibrated in
docs/metrics/tr.md, OCR and filters."""
from __future__ import annotations

import math
import unicodedata
from collections import Counter
from typing import Any

from ..api import OcrLine, OcrResult
from ..api.ocr import line_angle, line_height, sets_direction, text_angle
from .text_layout import LevelBox, level_boxes, nearest_gap
from .text_similarity import normalize_text, word_cost

# a read word within this normalised char distance of a word asked for is a reading of it (half its letters)
CLOSE_WORD = 0.5


def reads_as_asked(line: OcrLine, asked: list[str], close: float = CLOSE_WORD) -> bool:
    """Whether a word of the line is within `close` (normalised char distance) of a word asked for (`asked`, the
    normalised expected text's words): a word of the text, however badly read, which no photo-detail rule drops."""
    return any(word_cost(w, a) <= close for w in normalize_text(line.text).split() for a in asked)


def filter_lines(ocr: OcrResult, min_confidence: float, min_box_height_frac: float, min_glyph_confidence: float = 0.0,
                 glyph_gap: float = math.inf, expected: str = "", stray_confidence: float = 0.0,
                 stray_angle: float = math.inf, clutter_gap: float = math.inf, nested_share: float = math.inf,
                 nested_height: float = 0.0, alt_prob: float = math.inf) -> tuple[list[OcrLine], dict[str, Any]]:
    """Drop lines the recogniser is unsure of, boxes too small to be intended text (specks, texture), readings
    across the text lines' direction (`stray_lines`), decorative glyphs (`glyph_lines`), unsure readings of no asked
    word off the text (`clutter_lines`) or made of digits it does not hold (`numeral_lines`), and letters a small box
    read again inside a longer line (`nested_lines`)."""
    keep, dropped = [], {"low_confidence": 0, "tiny_box": 0, "stray": 0, "clutter": 0, "glyph": 0, "numerals": 0,
                         "nested": 0}
    for line in ocr.lines:
        if line.confidence < min_confidence:
            dropped["low_confidence"] += 1
        elif line_height(line) < min_box_height_frac * ocr.height:
            dropped["tiny_box"] += 1
        else:
            keep.append(line)
    strays = stray_lines(keep, stray_confidence, stray_angle, expected)
    dropped["stray"] = len(strays)
    keep = [ln for k, ln in enumerate(keep) if k not in strays]
    glyphs = glyph_lines(keep, min_glyph_confidence, glyph_gap, expected, alt_prob)
    dropped["glyph"] = len(glyphs)
    keep = [ln for k, ln in enumerate(keep) if k not in glyphs]
    # the last three on the same lines: the filters above see what they saw before these were added
    clutter = clutter_lines(keep, expected, stray_confidence, clutter_gap)
    numerals = numeral_lines(keep, expected, stray_confidence) - clutter
    nested = nested_lines(keep, nested_share, nested_height) - clutter - numerals
    dropped.update(clutter=len(clutter), numerals=len(numerals), nested=len(nested))
    gone = clutter | numerals | nested
    return [ln for k, ln in enumerate(keep) if k not in gone], dropped


def stray_lines(lines: list[OcrLine], stray_confidence: float, stray_angle: float, expected: str = "",
                close: float = CLOSE_WORD) -> set[int]:
    """Indices of photo detail read as text: a line read less surely than `stray_confidence`, none of whose words
    is within `close` of a word asked for, whose own direction differs by more than `stray_angle` degrees from
    the text's (the direction of the lines read surely, at least `stray_confidence`, that are at least twice as
    wide as high). A row of coat buttons read "C000" at 0.65-0.8 runs across the poster's lines; a word of the
    text, even one read unsurely, runs with them (within 7.7° on the tuning posters), except a short one whose box
    gives a rough direction (a lone "Čaj" boxed at 27° in text at 13°), which reads like a word asked for, as in
    `clutter_lines`. No rule without such sure lines (text running at 45 degrees or more has none): then nothing says
    which way the text runs.
    Calibrated in docs/metrics/tr.md, Stray lines."""
    anchors = [ln for ln in lines if ln.confidence >= stray_confidence and sets_direction(ln)]
    if not anchors:
        return set()
    angle = text_angle(anchors)
    asked = normalize_text(expected).split()
    return {k for k, ln in enumerate(lines)
            if ln.confidence < stray_confidence and abs((line_angle(ln) - angle + 90) % 180 - 90) > stray_angle
            and not reads_as_asked(ln, asked, close)}


def clutter_lines(lines: list[OcrLine], expected: str, stray_confidence: float, clutter_gap: float,
                  close: float = CLOSE_WORD) -> set[int]:
    """Indices of photo detail read as text that runs with it: a line read less surely than `stray_confidence`
    none of whose words is within `close` (normalised char distance) of a word asked for, lying more than
    `clutter_gap` median line heights from every line read surely (coat buttons read "C000" beside a poster). No
    rule without a sure line, and none for a line that reads like a word of the text, however far it stands.
    Calibrated in docs/metrics/tr.md, Stray lines."""
    if not math.isfinite(clutter_gap) or not lines:
        return set()
    asked = normalize_text(expected).split()
    boxes, median = level_boxes(lines)
    sure = [box for box in boxes if box[4].confidence >= stray_confidence]
    out = set()
    for k, box in enumerate(boxes):
        if box[4].confidence >= stray_confidence or not sure or reads_as_asked(box[4], asked, close):
            continue
        if nearest_gap(box, sure) > clutter_gap * median:
            out.add(k)
    return out


def glyph_lines(lines: list[OcrLine], min_glyph_confidence: float, glyph_gap: float, expected: str,
                alt_prob: float = math.inf) -> set[int]:
    """Indices of rings, dots and stars, not text: a reading with no letter or digit whose symbols the expected
    text does not hold (a star read as "★"), or a one- or two-character reading lying more than `glyph_gap`
    line heights from every longer line (off the text lines) and read less surely than `min_glyph_confidence`
    (a ring read as "O" at 0.6-0.92), unless it, or it with one of its alternatives of share `alt_prob` or more
    taken (a plain bar read `I`, alternative `l`), is a word asked for that no other reading has already given (a
    lone `I` under a short `UP`; surest first). Short words of the text sit within 0.3 line heights of their
    neighbours; both values are calibrated in docs/metrics/tr.md."""
    words = [normalize_text(ln.text).split() for ln in lines]
    texts = ["".join(w) for w in words]
    boxes, median = level_boxes(lines) if lines else ([], 1.0)
    longer = [box for box, text in zip(boxes, texts) if len(text) > 2]
    out, symbols, off = set(), set(normalize_text(expected)), []   # compared as the readings are (＄ is $)
    for k, (box, text) in enumerate(zip(boxes, texts)):
        if not any(unicodedata.category(c)[0] in "LN" for c in text):
            if not set(text) & symbols:
                out.add(k)
        elif len(text) <= 2 and box[4].confidence < min_glyph_confidence and longer:
            if nearest_gap(box, longer) > glyph_gap * median:
                off.append(k)
    asked = Counter(normalize_text(expected).split())
    read = Counter(w for k in range(len(lines)) if k not in out and k not in off for w in words[k])
    for k in sorted(off, key=lambda k: -lines[k].confidence):
        for need in map(Counter, _readings(lines[k], alt_prob)):
            if all(asked[w] - read[w] >= n for w, n in need.items()):
                read.update(need)
                break
        else:
            out.add(k)
    return out


def _readings(line: OcrLine, alt_prob: float) -> list[list[str]]:
    """The line's words as read, then with each of its alternatives of share `alt_prob` or more taken, one at a time."""
    text = line.text
    swapped = [text[:k] + alt + text[k + 1:] for k, alt, share in line.alternatives if share >= alt_prob and k < len(text)]
    return [normalize_text(t).split() for t in (text, *swapped)]


def numeral_lines(lines: list[OcrLine], expected: str, stray_confidence: float, close: float = CLOSE_WORD) -> set[int]:
    """Indices of round things read as numbers: a line read less surely than `stray_confidence`, none of whose
    words is within `close` of a word asked for, more than half of whose letters and digits are digits the asked
    text does not hold. Coat buttons, coins and rings come back as `0000`, `C000`, `000` over or beside the text,
    where `clutter_lines` (which wants them 3 line heights off) cannot take them; a letter the recogniser read as a
    digit stays (`r0` for `Ærø`: half digits) and so does a number read surely (a sign in the photo is text).
    Calibrated in docs/metrics/tr.md, OCR and filters."""
    asked, digits = normalize_text(expected).split(), {c for c in expected if c.isdigit()}
    out = set()
    for k, line in enumerate(lines):
        signs = [c for c in line.text if unicodedata.category(c)[0] in "LN"]
        foreign = sum(c.isdigit() and c not in digits for c in signs)
        if line.confidence < stray_confidence and 2 * foreign > len(signs) and not reads_as_asked(line, asked, close):
            out.add(k)
    return out


def nested_lines(lines: list[OcrLine], share: float, height: float) -> set[int]:
    """Indices of letters read twice: a reading of one or two characters whose levelled box lies at least `share`
    of its area inside the box of a line read with more characters and is at most `height` times that line's
    height (a `v` read inside `dyy`, an `r` inside `röße`: a second, smaller box over the same ink). A short word
    of the text is about as tall as the line beside it, and two lines of text do not share their ink.
    Calibrated in docs/metrics/tr.md, OCR and filters."""
    if not math.isfinite(share) or not lines:
        return set()
    boxes, _ = level_boxes(lines)
    sizes = [len(normalize_text(ln.text).replace(" ", "")) for ln in lines]

    def inside(inner: LevelBox, outer: LevelBox) -> float:
        w = min(inner[2], outer[2]) - max(inner[0], outer[0])
        h = min(inner[3], outer[3]) - max(inner[1], outer[1])
        return max(0.0, w) * max(0.0, h) / max(1e-9, (inner[2] - inner[0]) * (inner[3] - inner[1]))

    return {k for k, box in enumerate(boxes) if sizes[k] <= 2 and any(
        sizes[j] > sizes[k] and line_height(box[4]) <= height * line_height(other[4]) and inside(box, other) >= share
        for j, other in enumerate(boxes))}
