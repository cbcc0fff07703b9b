"""TR — text rendering: does the OCR'd text match the text the prompt asked for?

TR = w_char · char + (1 − w_char) · token, where char = 1 − normalised Levenshtein distance over characters and
token = 1 − word edit distance / max(word counts), a misspelt word costing its normalised char distance (so a
typo costs a fraction of a word, a missing or repeated word a whole one); both on normalised text, read in an
order that follows the lines' own angle and columns (docs/metrics/tr.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from ..api import Combine, Metric, MetricResult, OcrLine
from .text_doubt import resolve
from .text_filters import filter_lines
from .text_gutter import gutter_cuts
from .text_layout import reading_order
from .text_scripts import support
from .text_seams import Seam, read_once, repeated_seams
from .text_similarity import char_similarity, normalize_text, unmarking, word_similarity


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
    nested_share: float                 # a 1-2 character box this share inside a longer line's ...
    nested_height: float                # ... and at most this times its height reads that line's letters again
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
                                  float(params.stray_confidence), float(params.stray_angle), float(params.clutter_gap),
                                  float(params.nested_share), float(params.nested_height), float(params.alt_prob))
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
METRIC = Metric(name="TR", angle="TR", version="18", features=("ocr",), fn=_tr, combine=COMBINE, params=TRParams)
