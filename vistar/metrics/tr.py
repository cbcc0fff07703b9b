"""TR — text rendering: does the OCR'd text match the text the prompt asked for?

TR = w_char · char + (1 − w_char) · token, where char = 1 − normalised Levenshtein distance and
token = Jaccard of token sets, both on normalised text (see docs/metrics/tr.md).
"""
from __future__ import annotations

import unicodedata

from ..engine.registry import Metric, MetricResult
from ..features.ocr import OcrLine, OcrResult
from .text_similarity import APOSTROPHES, char_similarity, normalize_text, token_jaccard


def reading_order(lines: list[OcrLine]) -> list[OcrLine]:
    """Top-to-bottom rows (a line joins a row when its vertical centre is within half the median line
    height of the row's mean centre), left-to-right within a row. Independent of the detector's order."""
    if not lines:
        return []
    heights = sorted(max(1.0, ln.bounds[3] - ln.bounds[1]) for ln in lines)
    tol = heights[len(heights) // 2] / 2
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (_centre(ln), ln.bounds[0])):
        if rows and abs(_centre(line) - sum(map(_centre, rows[-1])) / len(rows[-1])) <= tol:
            rows[-1].append(line)
        else:
            rows.append([line])
    return [ln for row in rows for ln in sorted(row, key=lambda ln: ln.bounds[0])]


def _centre(line: OcrLine) -> float:
    return (line.bounds[1] + line.bounds[3]) / 2


def filter_lines(ocr: OcrResult, min_confidence: float, min_box_height_frac: float) -> tuple[list[OcrLine], dict]:
    """Drop lines the recogniser is unsure of and boxes too small to be intended text (specks, texture)."""
    keep, dropped = [], {"low_confidence": 0, "tiny_box": 0}
    for line in ocr.lines:
        if line.confidence < min_confidence:
            dropped["low_confidence"] += 1
        elif line.bounds[3] - line.bounds[1] < min_box_height_frac * ocr.height:
            dropped["tiny_box"] += 1
        else:
            keep.append(line)
    return keep, dropped


def expected_text(controls: dict) -> str | None:
    """`text=` as one string; a list is joined by spaces in the order given (write it in reading order)."""
    value = controls.get("text")
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    return None if value is None else str(value)


def tr_score(recognised: str, expected: str, w_char: float, **norm) -> dict:
    rec, exp = normalize_text(recognised, **norm), normalize_text(expected, **norm)
    char, token = char_similarity(rec, exp), token_jaccard(rec, exp)
    return {"score": w_char * char + (1.0 - w_char) * token, "char": char, "token": token, "recognised": rec, "expected": exp}


def unreadable(expected: str, alphabet: frozenset[str] | None) -> list[str]:
    """Letters and digits of the expected text the recogniser cannot output (None: alphabet unknown, none)."""
    if alphabet is None:
        return []
    chars = unicodedata.normalize("NFKC", expected)
    return sorted({c for c in chars if unicodedata.category(c)[0] in "LN" and c not in APOSTROPHES  # ʼ ʻ are Lm
                   and not {c, c.lower(), c.upper()} & alphabet})


def _tr(features: dict, controls: dict, params: dict, prompt) -> MetricResult:
    expected = expected_text(controls)
    if expected is None:
        return MetricResult(None, "error", 'TR needs the expected text: add text="..." or a double-quoted span to the prompt', {})
    missing = unreadable(expected, features["ocr"].alphabet)
    if missing:  # an exact render would score like no text: not a measurement of the image
        shown = " ".join(missing[:12]) + (f" (+{len(missing) - 12} more)" if len(missing) > 12 else "")
        return MetricResult(None, "skipped", f"the OCR model cannot read {shown} (not in its alphabet), so TR cannot "
                            "measure this text (docs/metrics/tr.md, Scripts)", {"unreadable": missing})
    lines, dropped = filter_lines(features["ocr"], float(params["min_confidence"]), float(params["min_box_height_frac"]))
    ordered = reading_order(lines)
    norm = {"case_sensitive": bool(params["case_sensitive"]), "strip_punctuation": bool(params["strip_punctuation"])}
    result = tr_score(" ".join(ln.text for ln in ordered), expected, float(params["w_char"]), **norm)
    return MetricResult.ok(result.pop("score"), **result, dropped_lines=dropped,
                           ocr_lines=[{"text": ln.text, "confidence": round(ln.confidence, 4),
                                       "box": [[round(x), round(y)] for x, y in ln.box]} for ln in ordered])


METRIC = Metric(name="TR", angle="TR", version="3", features=("ocr",), fn=_tr)
