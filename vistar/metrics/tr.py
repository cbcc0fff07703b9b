"""TR — text rendering: does the OCR'd text match the text the prompt asked for?

TR = w_char · char + (1 − w_char) · token, where char = 1 − normalised Levenshtein distance over characters and
token = 1 − word edit distance / max(word counts), a misspelt word costing its normalised char distance (so a
typo costs a fraction of a word, a missing or repeated word a whole one); both on normalised text, read in an
order that follows the lines' own angle and columns (docs/metrics/tr.md).
"""
from __future__ import annotations

import math
import unicodedata

from ..engine.registry import Metric, MetricResult
from ..features.ocr import OcrLine, OcrResult
from .text_similarity import APOSTROPHES, char_similarity, normalize_text, strip_accents, word_similarity


def fuse(char, token, w_char: float):
    """TR from its two sub-scores (floats or numpy arrays: calibration re-scores stored rows with this)."""
    return w_char * char + (1.0 - w_char) * token


def _angle(line: OcrLine) -> float:
    """Direction of the line's top and bottom edges, degrees (y down, so clockwise-tilted text is positive)."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = line.box[:4]
    return math.degrees(math.atan2((y1 - y0) + (y2 - y3), (x1 - x0) + (x2 - x3)))


def _height(line: OcrLine) -> float:
    """The box's own height (left and right edges), not its axis-aligned extent: unchanged by rotation."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = line.box[:4]
    return (math.dist((x0, y0), (x3, y3)) + math.dist((x1, y1), (x2, y2))) / 2


def _width(line: OcrLine) -> float:
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = line.box[:4]
    return (math.dist((x0, y0), (x1, y1)) + math.dist((x3, y3), (x2, y2))) / 2


def text_angle(lines: list[OcrLine]) -> float:
    """The dominant text angle: the width-weighted median of the lines' own angles, from lines at least twice as
    wide as high (a lone glyph's box says little about direction); 0 when there is none."""
    votes = sorted((_angle(ln), _width(ln)) for ln in lines if _width(ln) >= 2 * _height(ln) and abs(_angle(ln)) < 45)
    half, seen = sum(w for _, w in votes) / 2, 0.0
    for angle, weight in votes:
        seen += weight
        if seen >= half:
            return angle
    return 0.0


def reading_order(lines: list[OcrLine], columns: bool = False, column_gap: float = 0.8) -> list[OcrLine]:
    """Lines in reading order, independent of the detector's order and of the text's rotation.

    Every box is turned by minus the dominant text angle, so lines tilted by ±15° become level, then grouped
    into rows: a line joins a row when its centre is within half a median line height of the row's mean centre;
    rows top to bottom, left to right within a row. `columns`: the longest run of consecutive rows that a blank
    vertical band at least `column_gap` median line heights wide splits, with a line on each side in its first
    row, is read column by column (left to right, each to its end, recursively), the rows above and below it as
    before (a title over two columns)."""
    if not lines:
        return []
    boxes, median = _level_boxes(lines)
    ordered = _by_columns(boxes, median, column_gap * median) if columns else _flat(_rows(boxes, median))
    return [box[4] for box in ordered]


def _level_boxes(lines: list[OcrLine]) -> tuple[list[tuple], float]:
    """Each line's bounds (x0, y0, x1, y1, line) after turning by minus the dominant text angle, so that the
    lines lie level, and the median line height."""
    turn = math.radians(-text_angle(lines))
    cos, sin = math.cos(turn), math.sin(turn)
    boxes = []
    for line in lines:
        xs, ys = zip(*((x * cos - y * sin, x * sin + y * cos) for x, y in line.box))
        boxes.append((min(xs), min(ys), max(xs), max(ys), line))
    heights = sorted(_height(ln) for ln in lines)
    return boxes, max(1.0, heights[len(heights) // 2])


def _by_columns(boxes: list[tuple], median: float, gap: float) -> list[tuple]:
    if len(boxes) < 2:
        return boxes
    cut = _column_cut(boxes, gap)
    if cut is not None:
        return (_by_columns([b for b in boxes if b[2] <= cut], median, gap)
                + _by_columns([b for b in boxes if b[2] > cut], median, gap))
    rows = _rows(boxes, median)
    runs = [(a, b) for a in range(len(rows)) for b in range(a + 2, len(rows) + 1) if _columns_start(rows[a:b], gap)]
    if not runs:
        return _flat(rows)
    a, b = max(runs, key=lambda run: (run[1] - run[0], -run[0]))  # the longest run, the topmost of equals
    return [box for part in (rows[:a], rows[a:b], rows[b:]) for box in _by_columns(_flat(part), median, gap)]


def _columns_start(rows: list[list[tuple]], gap: float) -> bool:
    """These rows split into columns, which start together: the first row has a line on each side of the cut
    (a title set off to one side is not a column)."""
    cut = _column_cut(_flat(rows), gap)
    return cut is not None and min(b[2] for b in rows[0]) <= cut < max(b[2] for b in rows[0])


def _column_cut(boxes: list[tuple], min_gap: float) -> float | None:
    """Where the widest blank vertical band wider than `min_gap` starts, or None."""
    spans = sorted((b[0], b[2]) for b in boxes)
    best, cut, reach = min_gap, None, spans[0][1]
    for start, end in spans[1:]:
        if start - reach > best:
            best, cut = start - reach, reach
        reach = max(reach, end)
    return cut


def _rows(boxes: list[tuple], median: float) -> list[list[tuple]]:
    centre = lambda b: (b[1] + b[3]) / 2  # noqa: E731
    rows: list[list[tuple]] = []
    for box in sorted(boxes, key=lambda b: (centre(b), b[0])):
        if rows and abs(centre(box) - sum(map(centre, rows[-1])) / len(rows[-1])) <= median / 2:
            rows[-1].append(box)
        else:
            rows.append([box])
    return [sorted(row, key=lambda b: b[0]) for row in rows]


def _flat(rows: list[list[tuple]]) -> list[tuple]:
    return [box for row in rows for box in row]


def filter_lines(ocr: OcrResult, min_confidence: float, min_box_height_frac: float, min_glyph_confidence: float = 0.0,
                 glyph_gap: float = math.inf, expected: str = "") -> tuple[list[OcrLine], dict]:
    """Drop lines the recogniser is unsure of, boxes too small to be intended text (specks, texture), and
    decorative glyphs (`_glyphs`)."""
    keep, dropped = [], {"low_confidence": 0, "tiny_box": 0, "glyph": 0}
    for line in ocr.lines:
        if line.confidence < min_confidence:
            dropped["low_confidence"] += 1
        elif _height(line) < min_box_height_frac * ocr.height:
            dropped["tiny_box"] += 1
        else:
            keep.append(line)
    glyphs = _glyphs(keep, min_glyph_confidence, glyph_gap, expected)
    dropped["glyph"] = len(glyphs)
    return [ln for k, ln in enumerate(keep) if k not in glyphs], dropped


def _glyphs(lines: list[OcrLine], min_glyph_confidence: float, glyph_gap: float, expected: str) -> set[int]:
    """Indices of rings, dots and stars, not text: a reading with no letter or digit whose symbols the expected
    text does not hold (a star read as "★"), or a one- or two-character reading lying more than `glyph_gap`
    line heights from every longer line (off the text lines) and read less surely than `min_glyph_confidence`
    (a ring read as "O" at 0.6-0.92). Short words of the text sit within 0.3 line heights of their neighbours;
    both values are calibrated in docs/metrics/tr.md."""
    texts = [normalize_text(ln.text).replace(" ", "") for ln in lines]
    boxes, median = _level_boxes(lines) if lines else ([], 1.0)
    longer = [box for box, text in zip(boxes, texts) if len(text) > 2]
    out = set()
    for k, (box, text) in enumerate(zip(boxes, texts)):
        if not any(unicodedata.category(c)[0] in "LN" for c in text):
            if not set(text) & set(expected):
                out.add(k)
        elif len(text) <= 2 and box[4].confidence < min_glyph_confidence and longer:
            gap = min(max(o[0] - box[2], box[0] - o[2], o[1] - box[3], box[1] - o[3]) for o in longer)
            if gap > glyph_gap * median:
                out.add(k)
    return out


def expected_text(controls: dict) -> str | None:
    """`text=` as one string; a list is joined by spaces in the order given (write it in reading order)."""
    value = controls.get("text")
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    return None if value is None else str(value)


def tr_score(recognised: str, expected: str, w_char: float, **norm) -> dict:
    rec, exp = normalize_text(recognised, **norm), normalize_text(expected, **norm)
    char, token = char_similarity(rec, exp), word_similarity(rec, exp)
    return {"score": fuse(char, token, w_char), "char": char, "token": token, "recognised": rec, "expected": exp}


def unreadable(expected: str, alphabet: frozenset[str] | None) -> list[str]:
    """Letters and digits of the expected text the recogniser cannot output (None: alphabet unknown, none)."""
    if alphabet is None:
        return []
    chars = unicodedata.normalize("NFKC", expected)
    return sorted({c for c in chars if unicodedata.category(c)[0] in "LN" and c not in APOSTROPHES  # ʼ ʻ are Lm
                   and not {c, c.lower(), c.upper()} & alphabet})


def _readable_after_folding(missing: list[str], alphabet: frozenset[str]) -> bool:
    """Every unreadable letter is an accented form of a letter the recogniser can output (Greek ή, ό)."""
    return all(strip_accents(c) != c and {strip_accents(c), strip_accents(c).lower(), strip_accents(c).upper()} & alphabet
               for c in missing)


def _best_reading(lines: list[OcrLine], expected: str, params: dict, norm: dict) -> tuple[dict, list[OcrLine], str]:
    """Score the rows reading and, where the layout has columns, the column reading; keep the better. A grid of
    words is read either way by people; which one the prompt meant is told by the expected text."""
    best = None
    for layout in ("rows", "columns"):
        ordered = reading_order(lines, columns=layout == "columns", column_gap=float(params["column_gap"]))
        if best is not None and ordered == best[1]:
            continue
        result = tr_score(" ".join(ln.text for ln in ordered), expected, float(params["w_char"]), **norm)
        if best is None or result["score"] > best[0]["score"]:
            best = (result, ordered, layout)
    return best


def _tr(features: dict, controls: dict, params: dict, prompt) -> MetricResult:
    expected = expected_text(controls)
    if expected is None:
        return MetricResult(None, "error", 'TR needs the expected text: add text="..." or a double-quoted span to the prompt', {})
    ocr = features["ocr"]
    norm = {"case_sensitive": bool(params["case_sensitive"]), "strip_punctuation": bool(params["strip_punctuation"]),
            "fold_accents": bool(params["fold_accents"])}
    missing = unreadable(expected, ocr.alphabet)
    if missing and not _readable_after_folding(missing, ocr.alphabet):  # an exact render would score like no text
        shown = " ".join(missing[:12]) + (f" (+{len(missing) - 12} more)" if len(missing) > 12 else "")
        return MetricResult(None, "skipped", f"the OCR model cannot read {shown} (not in its alphabet), so TR cannot "
                            "measure this text (docs/metrics/tr.md, Scripts)", {"unreadable": missing})
    if missing:  # accented letters it reads only without their accents: compare with accents folded on both sides
        norm["fold_accents"] = True
    lines, dropped = filter_lines(ocr, float(params["min_confidence"]), float(params["min_box_height_frac"]),
                                  float(params["min_glyph_confidence"]), float(params["glyph_gap"]), expected)
    result, ordered, layout = _best_reading(lines, expected, params, norm)
    return MetricResult.ok(result.pop("score"), **result, layout=layout, dropped_lines=dropped, accents_folded=norm["fold_accents"],
                           **({"unreadable": missing} if missing else {}),
                           ocr_lines=[{"text": ln.text, "confidence": round(ln.confidence, 4),
                                       "box": [[round(x), round(y)] for x, y in ln.box]} for ln in ordered])


METRIC = Metric(name="TR", angle="TR", version="4", features=("ocr",), fn=_tr)
