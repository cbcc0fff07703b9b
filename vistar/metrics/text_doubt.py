"""Recogniser doubt: read the expected letter where the recogniser nearly read it (docs/metrics/tr.md, Recogniser doubt).

Greedy CTC decoding keeps one class per character and drops the rest of the posterior. Where the render drew `ı`
and the recogniser read `1` with `ı` close behind (`OcrLine.alternatives`), the render carried the letter and the
recogniser was torn; a typo draws a different letter, which the recogniser reads surely, with no alternative that is
the expected letter. So the reading TR scores is the one, among the greedy reading and its close alternatives (a
share of at least `alt_prob` of the read character's posterior), nearest to the expected text: a lexicon-aware
reading of the recogniser's posterior, the expected text being the lexicon. A character swapped for its
alternative then costs nothing; everything else is scored as read.
"""
from __future__ import annotations

import unicodedata
from typing import Any

from ..api import OcrLine
from .text_similarity import normalize_text

# an alternative's substitution costs this much more than a match: the alignment takes one only where it lowers
# the distance, never on a tie
_TIE = 1e-6
_UNREAD = "\0"   # a doubted character read as punctuation: matches no expected character


def doubted(lines: list[OcrLine], alt_prob: float) -> dict[int, list[str]]:
    """{index into the lines' text joined by spaces: its alternatives with a share of at least `alt_prob`}."""
    out: dict[int, list[str]] = {}
    offset = 0
    for line in lines:
        for k, alt, share in line.alternatives:
            if share >= alt_prob and k < len(line.text):
                out.setdefault(offset + k, []).append(alt)
        offset += len(line.text) + 1
    return out


def resolve(lines: list[OcrLine], expected: str, alt_prob: float, **norm: Any) -> tuple[str, list[str]]:
    """The lines' text joined by spaces, each doubted character replaced by its alternative where a least-cost
    alignment (Levenshtein over characters, each compared by its normalised form — ß's is "ss" —, spaces and
    punctuation left out unless doubted) with the `expected` text matches the alternative; and the swaps made
    ("1→ı"). Without an alternative the expected text holds, the text as read."""
    text = " ".join(line.text for line in lines)
    alternatives = doubted(lines, alt_prob)
    want = [key for key in (_key(c, norm) for c in unicodedata.normalize("NFKC", expected)) if key]
    options = {k: {_key(a, norm): a for a in alts} for k, alts in alternatives.items()}
    if not set(want) & {key for found in options.values() for key in found}:
        return text, []
    # a character read as punctuation (I read "!") keeps its place where it was doubted: it can only be swapped
    read = [(k, key or _UNREAD) for k, key in ((k, _key(c, norm)) for k, c in enumerate(text)) if key or k in options]
    rivals = [options.get(k, {}) for k, _ in read]

    def sub(i: int, j: int) -> float:
        return 0.0 if read[i][1] == want[j] else _TIE if want[j] in rivals[i] else 1.0

    n, m = len(read), len(want)
    d = [[float(i + j) if i == 0 or j == 0 else 0.0 for j in range(m + 1)] for i in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j] + 1.0, d[i][j - 1] + 1.0, d[i - 1][j - 1] + sub(i - 1, j - 1))
    chars, swaps = list(text), []
    i, j = n, m
    while i and j:
        if d[i][j] == d[i - 1][j - 1] + sub(i - 1, j - 1):
            if sub(i - 1, j - 1) == _TIE:
                k = read[i - 1][0]
                chars[k] = rivals[i - 1][want[j - 1]]
                swaps.append(f"{text[k]}→{chars[k]}")
            i, j = i - 1, j - 1
        elif d[i][j] == d[i - 1][j] + 1.0:
            i -= 1
        else:
            j -= 1
    return "".join(chars), swaps[::-1]


def _key(char: str, norm: dict[str, Any]) -> str:
    """CHAR as TR compares it (normalize_text), spaces dropped: "" for punctuation, "ss" for ß."""
    return normalize_text(char, **norm).replace(" ", "")
