"""Text normalisation and similarity used by TR (kept separate so calibration and tests can call them).

Policy (docs/metrics/tr.md): NFKC, casefold, apostrophes deleted, every other Unicode punctuation
character replaced by a space, whitespace collapsed. Symbols ($, %, +, ©) and diacritics are kept.
"""
from __future__ import annotations

import re
import unicodedata

from rapidfuzz.distance import Levenshtein

_WS = re.compile(r"\s+")
# Deleted rather than spaced, so "DON'T" ≈ "DONT" (OCR often misses them) and stays one token.
APOSTROPHES = frozenset("'\u2018\u2019\u02bc\u02bb")  # ʻ: the ʻokina, drawn and read as an apostrophe


def _punct_to_space(text: str) -> str:
    return "".join("" if c in APOSTROPHES else " " if unicodedata.category(c).startswith("P") else c for c in text)


def normalize_text(text: str, *, case_sensitive: bool = False, strip_punctuation: bool = True) -> str:
    """NFKC (folds full-width and ligature forms), invisible format characters dropped (zero-width spaces, bidi
    marks, soft hyphens: never drawn, so never read), optional casefold, punctuation policy, whitespace collapsed."""
    text = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    if not case_sensitive:
        text = unicodedata.normalize("NFKC", text.casefold())  # casefolding can undo NFKC composition (ǰ)
    if strip_punctuation:
        text = _punct_to_space(text)
    return _WS.sub(" ", text).strip()


def char_similarity(recognised: str, expected: str) -> float:
    """1 − Levenshtein distance / max(len): 1 for identical strings, 0 when nothing matches or one side is empty."""
    if not recognised and not expected:
        return 1.0
    return 1.0 - Levenshtein.normalized_distance(recognised, expected)


def token_jaccard(recognised: str, expected: str) -> float:
    """|A ∩ B| / |A ∪ B| of the whitespace-separated token sets (order and repeats ignored)."""
    a, b = set(recognised.split()), set(expected.split())
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
