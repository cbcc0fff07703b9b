"""The shipped recogniser's letter confusions on tuning posters, and TR's ladders with a candidate rule built on them:
a letter the recogniser reads as one other glyph in a large share of correct renders (a "look-alike") costs half a
letter, or nothing, in TR's char distance (docs/metrics/tr.md, Recogniser look-alikes).

    python benchmarks/bench_tr_confusions.py table [--n 400] [--seed 0] [--share 0.3] [--readings FILE]
    python benchmarks/bench_tr_confusions.py ladders [--share 0.3] [--splits tuning hard photo coins] [--sizes 60 80 80 30]
                                                     [--readings FILE] [--cache DIR]

table: every letter with a diacritic in the eight languages of the validity posters (vistar.validity.tr.WORDS,
either case, as the banks write it) is drawn in many words: tuning posters (vistar.validity.tr.sample_poster over
the `tuning` and `hard` splits in turn: tuning photos, textures, fonts, sizes and angles; seeds of their own) whose
every word, from the tuning half of its language's bank, has one letter replaced by the next letter of that
language's inventory. Only correct renders are drawn. Each is read by the shipped OCR stage; each normalised word is
aligned (Levenshtein opcodes) with the nearest word read, if that is at most half a word off, and each letter with a
diacritic is counted as read as itself, as another string, or dropped. A letter read as one other string of letters
or digits in at least `--share` of its aligned occurrences (and at least 10 of them), where the two do not differ
only by accents (TR already charges that half a letter), is a look-alike.

ladders: the tuning splits' ladders (vistar.validity.tr, vistar.validity.tr_tuning), read once by the shipped OCR
stage and scored three ways: as shipped (every confusion a whole letter), with the table's look-alikes at half a
letter, and at no cost. Printed per split and script group: correct > typo, typo > missing word, exact render
TR >= 0.95, correct > repeat lost, and how many typo renders score 1 (a typo that became free). Then the words of
the poster read in two pieces (two neighbouring readings of two or more characters, neither a word of the poster,
whose concatenation is within a fifth of a word of it: a word cut by a stripe or a decoration) in correct renders, and what those renders score.

`--readings` and `--cache` keep what the OCR read (JSON, pickles) and read it back on the next run.
"""
from __future__ import annotations

import argparse
import json
import pickle
import random
import time
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path
from unittest import mock

from rapidfuzz.distance import Levenshtein

from vistar.metrics import text_similarity
from vistar.metrics.text_similarity import normalize_text, strip_accents, word_cost
from vistar.validity.tr import DIACRITIC_LANGUAGES, GROUPS, WORDS, Poster, Scorer, ladder_cases, ladder_measures, sample_poster, score_ladder
from vistar.validity.tr_tuning import SPLITS

SEED_OFFSET = 100_000   # no other split draws from here
RULES = ("shipped", "half", "free")


def inventory(language: str) -> list[str]:
    """The letters with a diacritic the language's bank writes (both halves: the language's letters, not words)."""
    return sorted({c for w in WORDS[language] for c in w if c.isalpha() and not c.isascii()})


def carrier(word: str, letter: str, rng: random.Random) -> str:
    """`word` with one letter replaced by `letter`: the first when `letter` is a capital, else a later one."""
    k = 0 if letter.isupper() or len(word) == 1 else rng.randrange(1, len(word))
    return word[:k] + letter + word[k + 1:]


def cases(n: int, seed: int) -> list[dict]:
    """`n` correct renders of tuning posters whose words carry the languages' letters with diacritics in turn."""
    rng, out = random.Random(seed + SEED_OFFSET), []
    queue = {lang: [] for lang in DIACRITIC_LANGUAGES}
    while len(out) < n:
        language = DIACRITIC_LANGUAGES[len(out) % len(DIACRITIC_LANGUAGES)]
        poster = sample_poster(rng, SPLITS[("tuning", "hard")[len(out) // len(DIACRITIC_LANGUAGES) % 2]], language)

        def next_letter() -> str:
            if not queue[language]:
                queue[language] = rng.sample(inventory(language), len(inventory(language)))
            return queue[language].pop()

        blocks = [[[carrier(w, next_letter(), rng) for w in line] for line in block] for block in (poster.title, *poster.columns)]
        poster = Poster(blocks[0], blocks[1:], language, poster.style, poster.backdrop)
        try:
            image = poster.image()
        except ValueError:
            continue
        out.append({"language": language, "expected": poster.text(), "image": image, "poster": poster})
    return out


def readings(expected: str, read: str, most: float = 0.5) -> list[tuple[str, str | None]]:
    """(letter, what it was read as) for every letter with a diacritic of the normalised `expected`: each word is
    aligned (Levenshtein opcodes) with the word of the normalised `read` nearest to it, if that costs at most `most`
    of a word (else its letters count as None: the word was not read, or not in one piece); a letter is read as
    itself, another string or "" (dropped)."""
    words = normalize_text(read).split()
    out: list[tuple[str, str | None]] = []
    for word in normalize_text(expected).split():
        if not any(c.isalpha() and not c.isascii() for c in word):
            continue
        near = min(words, key=lambda w: word_cost(w, word), default="")
        if not near or word_cost(near, word) > most:
            out += [(c, None) for c in word if c.isalpha() and not c.isascii()]
            continue
        for src, dst, same in _blocks(word, near):
            if same or len(src) == len(dst):
                pairs: list[tuple[str, str | None]] = list(zip(src, dst))
            elif len(src) == 1 or not dst:
                pairs = [(c, dst) for c in src]   # one letter read as a string (æ as "ae"), or letters dropped
            else:
                pairs = [(c, None) for c in src]
            out += [(c, r) for c, r in pairs if c.isalpha() and not c.isascii()]
    return out


def _blocks(word: str, read: str) -> list[tuple[str, str, bool]]:
    """The alignment of `word` with `read` as runs: (part of word, part of read, equal?); neighbouring edits are one
    run, so æ read "ae" (an insertion and a substitution) is one letter read as two."""
    runs: list[tuple[str, str, bool]] = []
    for op in Levenshtein.opcodes(word, read):
        src, dst, same = word[op.src_start:op.src_end], read[op.dest_start:op.dest_end], op.tag == "equal"
        if runs and not same and not runs[-1][2]:
            src, dst = runs[-1][0] + src, runs[-1][1] + dst
            runs.pop()
        runs.append((src, dst, same))
    return runs


def lookalikes(counts: dict, share: float, least: int = 10) -> dict[str, str]:
    """letter -> the one string of letters or digits it is read as in at least `share` of its aligned occurrences
    (at least `least` of them), unless the two differ only by accents (TR already charges that half a letter)."""
    out = {}
    for letter, read in counts.items():
        total = sum(v for k, v in read.items() if k is not None)
        for other, k in read.most_common():
            if (total >= least and other and other.isalnum() and other != letter and k >= share * total
                    and strip_accents(other) != strip_accents(letter)):
                out[letter] = other
                break
    return out


def measure(n: int, seed: int, kept: Path | None) -> tuple[dict[str, Counter], int]:
    """What each letter with a diacritic was read as (`readings`) over `n` carrier posters; the posters' readings are
    kept in / read back from `kept`."""
    if kept and kept.exists():
        drawn = json.loads(kept.read_text())
    else:
        scorer = Scorer()
        drawn = [{"expected": case["expected"], "read": " ".join(
            line.text for line in scorer.ocr(case["image"]).lines if line.confidence >= float(scorer.params.min_confidence))}
            for case in cases(n, seed)]
        if kept:
            kept.write_text(json.dumps(drawn, ensure_ascii=False))
    counts: dict[str, Counter] = defaultdict(Counter)
    for case in drawn:
        for letter, as_read in readings(case["expected"], case["read"]):
            counts[letter][as_read] += 1
    return counts, len(drawn)


def lookalike_table(pairs: dict[str, str]) -> dict[int, str]:
    """A translation table from letter to the glyph the recogniser reads it as, in either case (not `ı` -> `I`: that
    capital is `i`'s). A letter whose look-alike has one of its own goes to the end of that chain."""
    table = {}
    for letter, glyph in pairs.items():
        path = [letter]
        while glyph in pairs and glyph not in path:
            path.append(glyph)
            glyph = pairs[glyph]
        table[letter] = min(path[path.index(glyph):]) if glyph in path else glyph  # a cycle: all to one of its letters
    table |= {c.upper(): t.upper() for c, t in table.items() if c.upper() != c and c.upper().lower() == c}
    return str.maketrans(table)


def candidate_distance(table: dict[int, str], free: bool):
    """TR's char distance with look-alikes costing half a letter, like an accent (the mean of the distances with and
    without accents and look-alikes), or nothing (`free`: look-alikes folded on both sides first)."""
    def plain(text: str) -> str:
        return strip_accents(text.translate(table))

    @lru_cache(maxsize=1 << 16)
    def distance(a: str, b: str) -> float:
        if a.isascii() and b.isascii():
            return float(Levenshtein.distance(a, b))
        if free:
            a, b = a.translate(table), b.translate(table)
        return (Levenshtein.distance(a, b) + Levenshtein.distance(plain(a), plain(b))) / 2
    return distance


def rescore(scored: list[dict], scorer: Scorer, distance) -> list[dict]:
    """The ladders' scores again from the stored OCR results with `distance` as TR's char distance (None: shipped)."""
    text_similarity.joined_cost.cache_clear()
    with mock.patch.object(text_similarity, "char_distance", distance or text_similarity.char_distance):
        out = [{**case, **{k: scorer.score(o, case["expected"]).score for k, o in case["ocr"].items()}} for case in scored]
    text_similarity.joined_cost.cache_clear()   # no candidate's costs outlive it
    return out


def split_words(scored: list[dict]) -> str:
    """Correct renders in which a word of the poster is read as two neighbouring pieces of two or more characters
    (joined, within a fifth of a word of it): how many, their TR."""
    found = []
    for case in scored:
        read = normalize_text(" ".join(ln.text for ln in case["ocr"]["correct"].lines)).split()
        words = set(normalize_text(case["expected"]).split())
        pieces = [f"{a}+{b}" for a, b in zip(read, read[1:])   # neither piece a word nor one glyph (a ring read "o")
                  if min(len(a), len(b)) > 1 and a not in words and b not in words and min(word_cost(a + b, w) for w in words) <= 0.2]
        if pieces:
            found.append((case["correct"] or 0.0, pieces))
    listed = ", ".join(f"{' '.join(p)} {tr:.3f}" for tr, p in found)
    return (f"{len(found)} of {len(scored)} correct renders read a word in two pieces; "
            f"{sum(tr < 0.95 for tr, _ in found)} of them score below 0.95" + (f": {listed}" if listed else ""))


def print_table(counts: dict[str, Counter], table: dict[str, str], share: float) -> None:
    print("letter    n  itself  dropped  unaligned  most often read as (share of aligned)")
    for letter in sorted(counts):
        read = counts[letter]
        total, aligned = sum(read.values()), sum(v for k, v in read.items() if k is not None)
        others = ", ".join(f"{k!r} {v / aligned:.2f}" for k, v in read.most_common() if k not in (letter, None, ""))[:60]
        print(f"{letter:6s} {total:4d}  {read[letter] / aligned:6.2f}  {read[''] / aligned:7.2f}  {read[None]:9d}  {others}"
              + ("   <- look-alike" if letter in table else ""))
    print(f"look-alikes at share >= {share}: {table}")


def ladders(args, pairs: dict[str, str]) -> None:
    scorer, table = Scorer(), lookalike_table(pairs)
    distances = {"shipped": None, "half": candidate_distance(table, free=False), "free": candidate_distance(table, free=True)}
    for split, n in zip(args.splits, args.sizes):
        kept = args.cache / f"{split}-{n}-{args.seed}.pickle" if args.cache else None
        if kept and kept.exists():
            scored = pickle.loads(kept.read_bytes())
        else:
            scored = score_ladder(ladder_cases(n, args.seed, SPLITS[split]), scorer)
            if kept:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_bytes(pickle.dumps(scored))
        for group, scripts in GROUPS.items():
            for rule in RULES:
                part = [s for s in rescore(scored, scorer, distances[rule]) if s["script"] in scripts]
                repeat = [s for s in part if s["repeated"]]
                measures = ", ".join(f"{k} {v:.3f}" for k, v in ladder_measures(part).items())
                lost = f"{sum((s['correct'] or 0) > (s['missing'] or 0) for s in repeat)}/{len(repeat)}"
                free = sum((s["typo"] or 0) >= 1.0 for s in part)
                print(f"{split:7s} {group:17s} n={len(part):3d} {rule:7s}: {measures}, correct > repeat lost {lost}, "
                      f"typo scoring 1: {free}", flush=True)
        print(f"{split:7s} split words: {split_words(scored)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("table", "ladders"))
    parser.add_argument("--n", type=int, default=400, help="carrier posters for the table")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--share", type=float, default=0.3)
    parser.add_argument("--readings", type=Path, help="the table's OCR readings (JSON): kept here, read back if there")
    parser.add_argument("--splits", nargs="+", default=["tuning", "hard", "photo", "coins"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 80, 80, 30], help="posters per split")
    parser.add_argument("--cache", type=Path, help="a folder for the ladders' OCR results (pickles), read back if there")
    args = parser.parse_args()
    start = time.perf_counter()
    counts, posters = measure(args.n, args.seed, args.readings)
    pairs = lookalikes(counts, args.share)
    print(f"{posters} carrier posters ({time.perf_counter() - start:.0f} s)")
    if args.part == "table":
        print_table(counts, pairs, args.share)
    else:
        print(f"look-alikes at share >= {args.share}: {pairs}")
        ladders(args, pairs)


if __name__ == "__main__":
    main()
