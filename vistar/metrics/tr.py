"""TR — text rendering: does the OCR'd text match the text the prompt asked for?

TR = w_char · char + (1 − w_char) · token, where char = 1 − normalised Levenshtein distance and
token = Jaccard of token sets, both on normalised text (see docs/metrics/tr.md).
"""
from __future__ import annotations

from ..engine.registry import Metric, MetricResult
from ..features.ocr import OcrLine, OcrResult
from .text_similarity import char_similarity, normalize_text, token_jaccard


def reading_order(lines: list[OcrLine]) -> list[OcrLine]:
    """Top-to-bottom rows (lines whose vertical centres are within half a median line height), left-to-right in a row."""
    if not lines:
        return []
    heights = sorted(max(1.0, ln.bounds[3] - ln.bounds[1]) for ln in lines)
    tol = heights[len(heights) // 2] / 2
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.bounds[1] + ln.bounds[3]) / 2):
        centre = (line.bounds[1] + line.bounds[3]) / 2
        if rows and abs(centre - _centre(rows[-1])) <= tol:
            rows[-1].append(line)
        else:
            rows.append([line])
    return [ln for row in rows for ln in sorted(row, key=lambda ln: ln.bounds[0])]


def _centre(row: list[OcrLine]) -> float:
    return sum((ln.bounds[1] + ln.bounds[3]) / 2 for ln in row) / len(row)


def filter_lines(ocr: OcrResult, min_confidence: float, min_box_height_frac: float) -> tuple[list[OcrLine], int]:
    keep = [ln for ln in ocr.lines
            if ln.confidence >= min_confidence and (ln.bounds[3] - ln.bounds[1]) >= min_box_height_frac * ocr.height]
    return keep, len(ocr.lines) - len(keep)


def tr_score(recognised: str, expected: str, w_char: float, **norm) -> dict:
    rec, exp = normalize_text(recognised, **norm), normalize_text(expected, **norm)
    char, token = char_similarity(rec, exp), token_jaccard(rec, exp)
    return {"score": w_char * char + (1.0 - w_char) * token, "char": char, "token": token, "recognised": rec, "expected": exp}


def _tr(features: dict, controls: dict, params: dict, prompt) -> MetricResult:
    expected = controls.get("text")
    if isinstance(expected, list):
        expected = " ".join(map(str, expected))
    lines, dropped = filter_lines(features["ocr"], params["min_confidence"], params["min_box_height_frac"])
    ordered = reading_order(lines)
    norm = {"case_sensitive": bool(params["case_sensitive"]), "strip_punctuation": bool(params["strip_punctuation"])}
    result = tr_score(" ".join(ln.text for ln in ordered), str(expected), float(params["w_char"]), **norm)
    return MetricResult.ok(result.pop("score"), **result, dropped_lines=dropped,
                           ocr_lines=[{"text": ln.text, "confidence": round(ln.confidence, 4),
                                       "box": [list(map(round, p)) for p in ln.box]} for ln in ordered])


METRIC = Metric(name="TR", angle="TR", version="1", features=("ocr",), fn=_tr)
