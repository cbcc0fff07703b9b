"""Corpus statistics of a prompt suite: counts, lexical diversity (Yule), length, near-duplicates.

Everything is computed on the natural-language cores (what a T2I model sees), tokenised by
`tokenize`: Unicode NFKC, case-folded, split on whitespace, punctuation and symbols stripped from
both ends of each token (so `"GAME` -> `game`, `mock-up` stays one token and Indic scripts, whose
vowel signs Python's `\\w` does not cover, keep whole words).

Yule's statistics, with N tokens, V types and V(i) the number of types that occur exactly i times,
M2 = sum_i i^2 V(i) (= sum over types of frequency^2):

- K = 10^4 * (M2 - N) / N^2                      (Yule 1944; Tweedie & Baayen 1998, eq. 16)
- I = V^2 / (M2 - V)                             (the form of quanteda/koRpus `textstat_lexdiv`)
- I_N = N^2 / (M2 - N) = 10^4 / K                (Yule's characteristic written with N; far larger)

Higher K means more repetition; higher I means more diversity. VISTAR reports I = 0.73 for its
prompts without a formula; only the V-based form gives values of that order for a corpus of a few
thousand tokens (I_N is in the tens), so `yule_i` is the V-based form and `yule_i_n` is given too.
I is undefined (infinite) when every type occurs once; it is reported as None then.
"""
from __future__ import annotations

import math
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field
from itertools import combinations

from ..prompts_dsl import Prompt


def _is_edge(char: str) -> bool:
    return unicodedata.category(char)[0] in "PS"


def tokenize(text: str) -> list[str]:
    tokens = []
    for chunk in unicodedata.normalize("NFKC", text).casefold().split():
        start, end = 0, len(chunk)
        while start < end and _is_edge(chunk[start]):
            start += 1
        while end > start and _is_edge(chunk[end - 1]):
            end -= 1
        if start < end:
            tokens.append(chunk[start:end])
    return tokens


@dataclass(frozen=True)
class Yule:
    tokens: int  # N
    types: int   # V
    m2: int      # sum_i i^2 V(i)
    k: float | None
    i: float | None
    i_n: float | None


def yule(tokens: list[str]) -> Yule:
    freqs = Counter(tokens)
    n, v = len(tokens), len(freqs)
    m2 = sum(f * f for f in freqs.values())
    k = 1e4 * (m2 - n) / (n * n) if n else None
    i = v * v / (m2 - v) if m2 > v else None
    i_n = n * n / (m2 - n) if m2 > n else None
    return Yule(tokens=n, types=v, m2=m2, k=k, i=i, i_n=i_n)


@dataclass
class SuiteStats:
    prompts: int
    by_set: dict[str, int] = field(default_factory=dict)
    by_role: dict[str, int] = field(default_factory=dict)
    by_angle: dict[str, int] = field(default_factory=dict)
    by_pair: dict[str, int] = field(default_factory=dict)  # "ROLE|ANGLE" -> count
    yule: Yule | None = None
    mean_tokens: float = 0.0
    mean_chars: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def _count(values) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def suite_stats(prompts: list[Prompt]) -> SuiteStats:
    token_lists = [tokenize(p.core) for p in prompts]
    all_tokens = [t for tokens in token_lists for t in tokens]
    count = len(prompts)
    return SuiteStats(
        prompts=count,
        by_set=_count(p.set or "unset" for p in prompts),
        by_role=_count(p.role for p in prompts),
        by_angle=_count(p.angle for p in prompts),
        by_pair=_count(f"{p.role}|{p.angle}" for p in prompts),
        yule=yule(all_tokens),
        mean_tokens=len(all_tokens) / count if count else 0.0,
        mean_chars=sum(len(p.core) for p in prompts) / count if count else 0.0,
    )


def core_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two cores' token sets (1 = same words, order ignored)."""
    return _jaccard(frozenset(tokenize(a)), frozenset(tokenize(b)))


def near_duplicates(prompts: list[Prompt], threshold: float = 0.5) -> list[tuple[str, str, float]]:
    """Pairs of prompts whose cores reach `threshold` token-set Jaccard similarity, most similar first.

    Exact, without comparing all pairs (prefix filtering): with tokens ordered rarest first, two sets with
    Jaccard >= t share a token among the first |x| - ceil(t|x|) + 1 of each, so only prompts whose prefixes
    meet are compared. Suites of 10^5 prompts take seconds instead of hours.
    """
    items = [(p.id or str(i), frozenset(tokenize(p.core))) for i, p in enumerate(prompts)]
    if threshold <= 0:
        return _ranked([(a, b, _jaccard(sa, sb)) for (a, sa), (b, sb) in combinations(items, 2)])
    freq = Counter(t for _, tokens in items for t in tokens)
    index: dict[str, list[int]] = {}
    found, empty = [], []
    for k, (pid, tokens) in enumerate(items):
        if not tokens:  # two empty cores are identical
            found += [(items[j][0], pid, 1.0) for j in empty] if threshold <= 1 else []
            empty.append(k)
            continue
        ordered = sorted(tokens, key=lambda t: (freq[t], t))
        prefix = ordered[:len(ordered) - math.ceil(threshold * len(ordered) - 1e-9) + 1]
        candidates = set()
        for token in prefix:
            bucket = index.setdefault(token, [])
            candidates.update(bucket)
            bucket.append(k)
        for j in sorted(candidates):
            sim = _jaccard(items[j][1], tokens)
            if sim >= threshold:
                found.append((items[j][0], pid, sim))
    return _ranked(found)


def _jaccard(a: frozenset, b: frozenset) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def _ranked(pairs: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    return sorted(pairs, key=lambda t: (-t[2], t[0], t[1]))
