"""TR — text rendering: does the OCR'd text match the text the prompt asked for?

TR = w_char · char + (1 − w_char) · token, where char = 1 − normalised Levenshtein distance over characters and
token = 1 − word edit distance / max(word counts), a misspelt word costing its normalised char distance (so a
typo costs a fraction of a word, a missing or repeated word a whole one); both on normalised text, read in an
order that follows the lines' own angle and columns (docs/metrics/tr.md).
"""
from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from ..api import Combine, Metric, MetricResult, OcrLine, OcrResult
from .text_doubt import resolve
from .text_gutter import gutter_cuts
from .text_layout import level_boxes, line_angle, line_height, nearest_gap, reading_order, sets_direction, text_angle
from .text_scripts import support
from .text_seams import Seam, read_once, repeated_seams
from .text_similarity import char_similarity, normalize_text, unmarking, word_cost, word_similarity

# a read word within this normalised char distance of a word asked for is a reading of it (half its letters)
CLOSE_WORD = 0.5


@dataclass(frozen=True)
class TRParams:
    """`metrics.TR.params` (values and meaning: vistar/data/ontology.yaml, docs/metrics/tr.md)."""

    w_char: float
    min_confidence: float
    min_box_height_frac: float
    min_glyph_confidence: float
    glyph_gap: float
    stray_confidence: float
    stray_angle: float
    clutter_gap: float                  # an unsure line matching no asked word this many line heights off the sure ones
    column_gap: float
    case_sensitive: bool
    strip_punctuation: bool
    fold_accents: bool
    scripts: tuple[str, ...] | str      # one name is read as a list of one
    alt_prob: float                     # a doubted character counts as its alternative from this share (.inf: never)
    unseen_marks: tuple[str, ...] | str  # letters compared without their marks: the recogniser does not read them
    cedilla_as_comma: bool              # ş ţ and ș ț (Romanian comma below) compared as one letter each


@overload
def fuse(char: float, token: float, w_char: float) -> float: ...
@overload
def fuse(char: np.ndarray, token: np.ndarray, w_char: float) -> np.ndarray: ...


def fuse(char: Any, token: Any, w_char: float) -> Any:
    """TR from its two sub-scores (floats or numpy arrays: calibration re-scores stored rows with this)."""
    return w_char * char + (1.0 - w_char) * token


def filter_lines(ocr: OcrResult, min_confidence: float, min_box_height_frac: float, min_glyph_confidence: float = 0.0,
                 glyph_gap: float = math.inf, expected: str = "", stray_confidence: float = 0.0,
                 stray_angle: float = math.inf, clutter_gap: float = math.inf) -> tuple[list[OcrLine], dict[str, Any]]:
    """Drop lines the recogniser is unsure of, boxes too small to be intended text (specks, texture), readings
    across the text lines' direction (`_strays`), decorative glyphs (`_glyphs`) and unsure readings of no asked
    word off the text (`_clutter`)."""
    keep, dropped = [], {"low_confidence": 0, "tiny_box": 0, "stray": 0, "clutter": 0, "glyph": 0}
    for line in ocr.lines:
        if line.confidence < min_confidence:
            dropped["low_confidence"] += 1
        elif line_height(line) < min_box_height_frac * ocr.height:
            dropped["tiny_box"] += 1
        else:
            keep.append(line)
    strays = _strays(keep, stray_confidence, stray_angle, expected)
    dropped["stray"] = len(strays)
    keep = [ln for k, ln in enumerate(keep) if k not in strays]
    glyphs = _glyphs(keep, min_glyph_confidence, glyph_gap, expected)
    dropped["glyph"] = len(glyphs)
    keep = [ln for k, ln in enumerate(keep) if k not in glyphs]
    clutter = _clutter(keep, expected, stray_confidence, clutter_gap)   # last: the other filters see what they saw before
    dropped["clutter"] = len(clutter)
    return [ln for k, ln in enumerate(keep) if k not in clutter], dropped


def _strays(lines: list[OcrLine], stray_confidence: float, stray_angle: float, expected: str = "",
            close: float = CLOSE_WORD) -> set[int]:
    """Indices of photo detail read as text: a line read less surely than `stray_confidence`, none of whose words
    is within `close` of a word asked for, whose own direction differs by more than `stray_angle` degrees from
    the text's (the direction of the lines read surely, at least `stray_confidence`, that are at least twice as
    wide as high). A row of coat buttons read "C000" at 0.65-0.8 runs across the poster's lines; a word of the
    text, even one read unsurely, runs with them (within 7.7° on the tuning posters), except a short one whose box
    gives a rough direction (a lone "Čaj" boxed at 27° in text at 13°), which reads like a word asked for, as in
    `_clutter`. No rule without such sure lines (text running at 45 degrees or more has none): then nothing says
    which way the text runs.
    Calibrated in docs/metrics/tr.md, Stray lines."""
    anchors = [ln for ln in lines if ln.confidence >= stray_confidence and sets_direction(ln)]
    if not anchors:
        return set()
    angle = text_angle(anchors)
    asked = normalize_text(expected).split()
    return {k for k, ln in enumerate(lines)
            if ln.confidence < stray_confidence and abs((line_angle(ln) - angle + 90) % 180 - 90) > stray_angle
            and not any(word_cost(w, a) <= close for w in normalize_text(ln.text).split() for a in asked)}


def _clutter(lines: list[OcrLine], expected: str, stray_confidence: float, clutter_gap: float,
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
        words = normalize_text(box[4].text).split()
        if box[4].confidence >= stray_confidence or not sure or any(
                word_cost(w, a) <= close for w in words for a in asked):
            continue
        if nearest_gap(box, sure) > clutter_gap * median:
            out.add(k)
    return out


def _glyphs(lines: list[OcrLine], min_glyph_confidence: float, glyph_gap: float, expected: str) -> set[int]:
    """Indices of rings, dots and stars, not text: a reading with no letter or digit whose symbols the expected
    text does not hold (a star read as "★"), or a one- or two-character reading lying more than `glyph_gap`
    line heights from every longer line (off the text lines) and read less surely than `min_glyph_confidence`
    (a ring read as "O" at 0.6-0.92). Short words of the text sit within 0.3 line heights of their neighbours;
    both values are calibrated in docs/metrics/tr.md."""
    texts = [normalize_text(ln.text).replace(" ", "") for ln in lines]
    boxes, median = level_boxes(lines) if lines else ([], 1.0)
    longer = [box for box, text in zip(boxes, texts) if len(text) > 2]
    out, symbols = set(), set(normalize_text(expected))   # compared as the readings are (＄ is $)
    for k, (box, text) in enumerate(zip(boxes, texts)):
        if not any(unicodedata.category(c)[0] in "LN" for c in text):
            if not set(text) & symbols:
                out.add(k)
        elif len(text) <= 2 and box[4].confidence < min_glyph_confidence and longer:
            if nearest_gap(box, longer) > glyph_gap * median:
                out.add(k)
    return out


def expected_text(controls: dict[str, Any]) -> str | None:
    """`text=` as one string; a list is joined by spaces in the order given (write it in reading order)."""
    value = controls.get("text")
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    return None if value is None else str(value)


def tr_score(recognised: str, expected: str, w_char: float, **norm: Any) -> dict[str, Any]:
    rec, exp = normalize_text(recognised, **norm), normalize_text(expected, **norm)
    char, token = char_similarity(rec, exp), word_similarity(rec, exp)
    return {"score": fuse(char, token, w_char), "char": char, "token": token, "recognised": rec, "expected": exp}


def _best_reading(lines: list[OcrLine], expected: str, params: TRParams,
                  norm: dict[str, Any]) -> tuple[dict[str, Any], list[OcrLine], str]:
    """Score the rows reading and, where the layout has columns, the column reading; keep the better. A grid of
    words is read either way by people; which one the prompt meant is told by the expected text. Each reading
    takes the alternatives the recogniser doubted between where the expected text has them (`text_doubt`)."""
    def score(ordered: list[OcrLine]) -> dict[str, Any]:
        text, swaps = resolve(ordered, expected, float(params.alt_prob), **norm)
        return {**tr_score(text, expected, float(params.w_char), **norm), "read_as_alternative": swaps}

    ordered = reading_order(lines, columns=False, column_gap=float(params.column_gap))
    best = (score(ordered), ordered, "rows")
    columns = reading_order(lines, columns=True, column_gap=float(params.column_gap))
    if columns != ordered:
        result = score(columns)
        if result["score"] > best[0]["score"]:
            best = (result, columns, "columns")
    return best


def _read_repairs(lines: list[OcrLine], expected: str, params: TRParams,
                  norm: dict[str, Any]) -> tuple[dict[str, Any], list[OcrLine], str]:
    """`_best_reading`, with two repairs of the detector's boxes taken where they bring the characters read nearer
    the expected text (`char` rises: both are character-level, and the word alignment of a reading out of order
    can move either way): each seam where it may have read letters twice read once (`text_seams`, listed as
    `read_once`), seam by seam in reading order (rows top to bottom, each left to right); then each line it ran
    across a column gutter cut there (`text_gutter`, listed as `cut_at_gutter`), at the space that reads best."""
    best = _best_reading(lines, expected, params, norm)
    taken: list[Seam] = []
    work = lines
    for seam in repeated_seams(lines):
        candidate = read_once(lines, [*taken, seam])
        trial = _best_reading(candidate, expected, params, norm)
        if trial[0]["char"] > best[0]["char"]:
            best, taken, work = trial, [*taken, seam], candidate
    cut: list[str] = []
    for line, ways in gutter_cuts(work, float(params.column_gap)):
        base, chosen = work, ""
        for left, right in ways:
            candidate = [part for ln in base for part in ((left, right) if ln is line else (ln,))]
            trial = _best_reading(candidate, expected, params, norm)
            if trial[0]["char"] > best[0]["char"]:
                best, work, chosen = trial, candidate, f"{left.text}|{right.text}"
        if chosen:
            cut.append(chosen)
    if taken:
        best[0]["read_once"] = [f"{lines[s.left].text}|{lines[s.right].text}" for s in taken]
    if cut:
        best[0]["cut_at_gutter"] = cut
    return best


def _tr(features: dict[str, Any], controls: dict[str, Any], params: TRParams, prompt: Any) -> MetricResult:
    expected = expected_text(controls)
    if expected is None:
        return MetricResult.error('TR needs the expected text: add text="..." or a double-quoted span to the prompt')
    ocr = features["ocr"]
    unseen = "".join(params.unseen_marks)
    norm: dict[str, Any] = {"case_sensitive": bool(params.case_sensitive), "fold_accents": bool(params.fold_accents),
                            "strip_punctuation": bool(params.strip_punctuation), "unseen_marks": unseen,
                            "cedilla_as_comma": bool(params.cedilla_as_comma)}
    why, unsupported = support(expected, ocr.alphabet, params.scripts,
                               case_sensitive=norm["case_sensitive"], fold_accents=norm["fold_accents"])
    if why:  # an exact render would score like no text, or the reading is not trusted: say so, never score low
        return MetricResult.skipped(why, **unsupported)
    lines, dropped = filter_lines(ocr, float(params.min_confidence), float(params.min_box_height_frac),
                                  float(params.min_glyph_confidence), float(params.glyph_gap), expected,
                                  float(params.stray_confidence), float(params.stray_angle), float(params.clutter_gap))
    result, ordered, layout = _read_repairs(lines, expected, params, norm)
    marks = {c for c in normalize_text(expected, **{**norm, "unseen_marks": ""}) if ord(c) in unmarking(unseen)}
    if marks:   # said on the row: a render without these marks would score the same
        result["marks_not_scored"] = "".join(sorted(marks))
    return MetricResult.ok(result.pop("score"), **result, layout=layout, dropped_lines=dropped,
                           ocr_lines=[{"text": ln.text, "confidence": round(ln.confidence, 4),
                                       "box": [[round(x), round(y)] for x, y in ln.box]} for ln in ordered])


# calibration re-scores stored (char, token) pairs with the same fuse()
COMBINE = Combine(params=("w_char",), subscores=("char", "token"),
                  fn=lambda sub, params, roles: fuse(sub[:, 0], sub[:, 1], float(params.w_char)))
METRIC = Metric(name="TR", angle="TR", version="15", features=("ocr",), fn=_tr, combine=COMBINE, params=TRParams)
