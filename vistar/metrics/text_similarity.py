"""Text normalisation and similarity used by TR (kept separate so calibration and tests can call them).

Policy (docs/metrics/tr.md): NFKC, Greek letters drawn like Latin ones folded to Latin, casefold, apostrophes
deleted, every other Unicode punctuation character replaced by a space, whitespace collapsed. Symbols ($, %, +,
©) and diacritics are kept unless `fold_accents`.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

_WS = re.compile(r"\s+")
_DOTTED_I = re.compile("i\u0307+")
# Deleted rather than spaced, so "DON'T" ≈ "DONT" (OCR often misses them) and stays one token.
APOSTROPHES = frozenset("'\u2018\u2019\u02bc\u02bb")  # ʻ: the ʻokina, drawn and read as an apostrophe
# Greek letters drawn like Latin ones: no reader (nor the recogniser, which reads ΚΑΛΗ as "KAΛH" and ταβέρνα as
# "ταβepνα") can tell them apart, so both sides are folded to Latin before comparing. Capitals are folded before
# casefolding (Η looks like H, its lowercase η like n), lowercase after.
GREEK_LATIN_CAPITALS = str.maketrans("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX")
GREEK_LATIN_LOWER = str.maketrans("αεικνορυχη", "aeikvopuxn")
# s and t with a cedilla are written for Romanian ș and ț with a comma below (Unicode had only the cedilla forms until
# 3.0; fonts and texts still mix them) and the recogniser swaps the two (școală read şcoală, çarşı read çarșı): one
# letter each, compared in the comma form
CEDILLA_AS_COMMA = str.maketrans("şŞţŢ", "șȘțȚ")


def _punct_to_space(text: str) -> str:
    return "".join("" if c in APOSTROPHES else " " if unicodedata.category(c).startswith("P") else c for c in text)


def strip_accents(text: str) -> str:
    """`text` without combining marks (é → e, ή → η, ł stays: it is a letter of its own)."""
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)))


@lru_cache(maxsize=64)
def unmarking(letters: str) -> dict[int, str]:
    """str.translate table taking each of `letters`, in either case, to itself without its marks."""
    every = {v for c in unicodedata.normalize("NFC", letters) for v in (c, c.lower(), c.upper()) if len(v) == 1}
    return {ord(c): strip_accents(c) for c in every if strip_accents(c) != c}


def normalize_text(text: str, *, case_sensitive: bool = False, strip_punctuation: bool = True,
                   fold_accents: bool = False, unseen_marks: str = "", cedilla_as_comma: bool = False) -> str:
    """NFKC (folds full-width and ligature forms), invisible format characters dropped (zero-width spaces, bidi
    marks, soft hyphens: never drawn, so never read), Greek look-alike letters to Latin, optional casefold,
    optional s/t cedilla as comma below, optional accent folding (all letters, or only `unseen_marks`: letters whose
    marks the recogniser does not read), punctuation policy, whitespace collapsed."""
    text = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    text = text.translate(GREEK_LATIN_CAPITALS)
    if not case_sensitive:
        # casefolding can undo NFKC composition (ǰ); Turkish İ casefolds to i + a combining dot, read as plain i
        text = _DOTTED_I.sub("i", unicodedata.normalize("NFKC", text.casefold()))
    if cedilla_as_comma:
        text = text.translate(CEDILLA_AS_COMMA)
    if fold_accents:
        text = strip_accents(text)
    elif unseen_marks:
        text = text.translate(unmarking(unseen_marks))
    text = text.translate(GREEK_LATIN_LOWER)
    if strip_punctuation:
        text = _punct_to_space(text)
    return _WS.sub(" ", text).strip()


@lru_cache(maxsize=1 << 16)  # the word alignment asks for the same pairs and splits many times
def char_distance(a: str, b: str) -> float:
    """Levenshtein distance in which a letter that differs only by its accent (naive for naïve, e for é) costs
    half: the mean of the distances with and without accents. People read a lost accent as a smaller slip than
    a wrong letter, and the recogniser drops some accents (ï) from perfect renders."""
    if a.isascii() and b.isascii():  # nothing to strip
        return float(Levenshtein.distance(a, b))
    return (Levenshtein.distance(a, b) + Levenshtein.distance(strip_accents(a), strip_accents(b))) / 2


def char_similarity(recognised: str, expected: str) -> float:
    """1 − char_distance / max(len): 1 for identical strings, 0 when nothing matches or one side is empty."""
    if not recognised and not expected:
        return 1.0
    # whole texts, one pair per image: uncached, or they would push out the word pairs the cache is for and keep
    # every image's text alive for the run
    distance = char_distance.__wrapped__(recognised, expected)
    return max(0.0, 1.0 - distance / max(len(recognised), len(expected)))


def word_cost(a: str, b: str) -> float:
    """Cost of reading word `a` where `b` was asked: its normalised char distance, a fraction of one word."""
    return min(1.0, char_distance(a, b) / max(len(a), len(b))) if a or b else 0.0


# the most words one word can stand for (or be read as) in the word alignment: NONONO is three
MAX_JOINED = 3


@lru_cache(maxsize=1 << 16)
def joined_cost(word: str, parts: tuple[str, ...]) -> float:
    """Cost of reading the words `parts` as one (`GRAND OPENING` as `word`, a lost space) or one word as `parts`:
    the best split of `word` into as many pieces, each costing `word_cost` against its part, plus each space lost
    as one character of the run (the parts and the spaces between them). GRANDOPENING for GRAND OPENING costs
    1/13, NONONO for NO NO NO 2/8; a word missing from the run still costs its whole word (an empty piece), so an
    unrelated extra word never comes cheaper than inserting it."""
    # best[p][k]: the first p parts read as word[:k]; an empty piece is a lost word, a whole one as when deleted
    best = [[0.0] + [float("inf")] * len(word)]
    for part in parts:
        prev = best[-1]
        best.append([min(prev[i] + (word_cost(word[i:k], part) if k > i else 1.0) for i in range(k + 1))
                     for k in range(len(word) + 1)])
    return best[-1][len(word)] + _spaces(parts)


def word_distance(recognised: list[str], expected: list[str]) -> float:
    """Edit distance over words: a missing or extra word costs 1, a misspelt one `word_cost` (a one-letter typo in
    a 5-letter word 0.2), up to `MAX_JOINED` words read as one or one read as as many `joined_cost`. Order and
    repeats count."""
    n, m = len(expected), len(recognised)
    d = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                d[i][j] = float(i + j)
                continue
            best = min(d[i - 1][j] + 1.0, d[i][j - 1] + 1.0, d[i - 1][j - 1] + word_cost(recognised[j - 1], expected[i - 1]))
            for k in range(2, MAX_JOINED + 1):
                if i >= k:
                    best = _join(best, d[i - k][j - 1], recognised[j - 1], expected[i - k:i])
                if j >= k:
                    best = _join(best, d[i - 1][j - k], expected[i - 1], recognised[j - k:j])
            d[i][j] = best
    return d[n][m]


def _join(best: float, before: float, word: str, parts: list[str]) -> float:
    """`best`, or `before` + `joined_cost(word, parts)` where lower. The split search is most of the alignment's
    time, so a join is first bounded below, by lengths and then by letters, and skipped when it cannot win."""
    if before + length_floor(word, parts) >= best or before + letter_floor(word, parts) >= best:
        return best
    return min(best, before + joined_cost(word, tuple(parts)))


def _spaces(parts: Sequence[str]) -> float:
    """The lost spaces of a run of `parts` read as one word: one character of the run (the parts and the spaces
    between them) each."""
    return (len(parts) - 1) / (sum(map(len, parts)) + len(parts) - 1)


def length_floor(word: str, parts: list[str]) -> float:
    """At most `joined_cost(word, parts)`, from lengths alone: a piece of q letters costs at least
    1 − q / len(part) when shorter than its part (and 0 when longer), so the cheapest split gives the shortest
    parts their letters first. Not where a mark has no precomposed letter (`q̃`, Devanagari, Yoruba `ọ̀`): the
    char distance then counts the mark half, and only the spaces bound the join."""
    if not all(t.isascii() or len(strip_accents(t)) == len(t) for t in (word, *parts)):
        return _spaces(parts)
    covered, letters = 0.0, len(word)
    for length in sorted(map(len, parts)):
        take = min(length, letters)
        covered, letters = covered + take / length, letters - take
    return len(parts) - covered + _spaces(parts)


def letter_floor(word: str, parts: list[str]) -> float:
    """At most `joined_cost(word, parts)`: the pieces' char distances add up to at least the word's to the parts
    written together, none is divided by more than the longest word, and a sum of costs each capped at 1 is at
    least that sum capped at 1."""
    return min(1.0, char_distance(word, "".join(parts)) / max(len(word), *map(len, parts))) + _spaces(parts)


def word_similarity(recognised: str, expected: str) -> float:
    """1 − word_distance / max(word counts): 1 for the same words in the same order, 0 when nothing matches."""
    rec, exp = recognised.split(), expected.split()
    if not rec and not exp:
        return 1.0
    return max(0.0, 1.0 - word_distance(rec, exp) / max(len(rec), len(exp)))
