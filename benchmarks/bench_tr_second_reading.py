"""The OCR stage's second reading of every line (its crop trimmed and stretched; vistar/features/ocr_second_reading.py)
measured on tuning data: the marks it recovers and what it does to TR's ladders (docs/metrics/tr_reading.md, A
second reading).

    python benchmarks/bench_tr_second_reading.py views [--n 160] [--seed 0]
    python benchmarks/bench_tr_second_reading.py letters [--n 160] [--seed 0]
    python benchmarks/bench_tr_second_reading.py cost [--posters 6] [--rounds 5]
    python benchmarks/bench_tr_second_reading.py ladders [--splits tuning hard photo coins fine stripes]
                                                         [--sizes 60 80 80 30 60 60] [--seed 0] [--cache DIR]

views: the candidate views of a line crop the second reading was chosen from (`VIEWS`), each read beside the
first reading by the shipped OCR stage's recogniser calls (every look's lines; no TR) on the carrier posters below;
printed per view: the share of the letters with a diacritic read as themselves by the first reading, by the view,
and by either.

letters: the carrier posters of bench_tr_confusions.py (tuning posters whose every word, from the tuning half of
its language's bank, carries one letter with a diacritic, every such letter of the eight languages in turn), read
with `features.ocr.second_reading` off and on and scored by the shipped TR; each letter with a diacritic of the
expected text as TR compares it (normalised: `ş` as `ș`, `ť` `ț` `ï` bare) is counted as read as itself or not in the
text TR compared (its recogniser doubt taken), per letter and in all. The cost: each poster is drawn again with
every mark dropped, strokes too (`ó` and `ø` as `o`, `ł` as `l`; `æ`, `ı` stay) and scored against the text with its
marks; a letter whose mark was dropped but which TR's text holds with the mark is a mark counted that was not drawn.

cost: milliseconds per image of the OCR stage (one thread) with the second reading off and on, on the correct
renders of the first `--posters` tuning ladder posters (each read once untimed first); the two alternate, `--rounds` times, in one process (so they
share the machine's load); the median per image, and their median ratio.

ladders: each tuning split's ladders (correct / typo / missing word) read with the second reading off and on and
scored by the shipped TR: the validity measures per script group, the renders whose TR rose and fell, the typo
renders scoring 1, and each moved correct render with both readings. `--cache` keeps the readings (pickles).
"""
from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
from bench_tr_confusions import cases, readings
from tr_ladder_report import group_report, moved_correct, ocr_scorer, read_ladders, rule_off, score_reads, up_down

from vistar.features import ocr_steps
from vistar.features.ocr_second_reading import TRIM, base_letter, stretched
from vistar.validity.tr import GROUPS, Poster, Scorer, ladder_cases
from vistar.validity.tr_tuning import SPLITS

WAYS = (False, True)


def scorer_with(second: bool) -> Scorer:
    """The shipped OCR and TR with `features.ocr.second_reading` set to SECOND."""
    return ocr_scorer(second_reading=second)


def _stretch(crop: np.ndarray, by: float, interpolation: int = cv2.INTER_CUBIC) -> np.ndarray:
    return cv2.resize(crop, (max(1, round(crop.shape[1] * by)), crop.shape[0]), interpolation=interpolation)


def _trim(crop: np.ndarray, share: float = TRIM) -> np.ndarray:
    cut = int(crop.shape[0] * share)
    return crop[cut:crop.shape[0] - cut]


def _pad(crop: np.ndarray, share: float = 0.15) -> np.ndarray:
    cut = max(1, round(crop.shape[0] * share))
    return cv2.copyMakeBorder(crop, cut, cut, 0, 0, cv2.BORDER_REPLICATE)


def _grey(crop: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY).astype(np.float32)
    low, high = np.percentile(grey, 2), np.percentile(grey, 98)
    grey = np.clip((grey - low) / max(high - low, 1.0) * 255, 0, 255).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)


VIEWS = {"padded 15 %": _pad, "stretched 1.15x": lambda c: _stretch(c, 1.15), "stretched 1.3x": lambda c: _stretch(c, 1.3),
         "stretched 1.5x": lambda c: _stretch(c, 1.5), "stretched 2x": lambda c: _stretch(c, 2.0),
         "stretched 1.5x, linear": lambda c: _stretch(c, 1.5, cv2.INTER_LINEAR), "trimmed 8 %": _trim,
         "trimmed 8 %, stretched 1.3x (shipped)": stretched, "trimmed 8 %, stretched 1.5x": lambda c: _stretch(_trim(c), 1.5),
         "contrast-stretched grey": _grey}


def views(n: int, seed: int) -> None:
    """Every recogniser call of the stage (second reading off) made again with each view; the readings of the
    first call and of each view joined per poster and aligned with the expected text (`readings`)."""
    calls: list[dict[str, list[str]]] = []
    first = ocr_steps.recognise

    def recognise(engine, crops, **turned):
        out = first(engine, crops, **turned)
        if crops:
            calls.append({"first": [str(t) for t in out[0]], **{name: [str(t) for t in first(engine, [view(c) for c in crops], **turned)[0]]
                                                              for name, view in VIEWS.items()}})
        return out

    ocr_steps.recognise = recognise
    scorer, right, total = scorer_with(False), Counter(), 0
    for case in cases(n, seed):
        calls.clear()
        scorer.ocr(case["image"])
        read = {name: readings(case["expected"], " ".join(t for call in calls for t in call[name])) for name in ("first", *VIEWS)}
        total += len(read["first"])
        right["first"] += sum(a == b for a, b in read["first"])
        for name in VIEWS:
            right[name] += sum(a == b for a, b in read[name])
            right[name, "either"] += sum(a == b or c == d for (a, b), (c, d) in zip(read["first"], read[name]))
    ocr_steps.recognise = first
    print(f"{n} carrier posters, {total} letters with a diacritic; read as themselves by the first reading "
          f"{right['first'] / total:.3f}")
    for name in VIEWS:
        print(f"{name:40s} the view {right[name] / total:.3f}, either {right[name, 'either'] / total:.3f}")


def without_marks(poster: Poster) -> Poster:
    """POSTER drawn with every mark dropped, strokes too (`ó` as `o`, `ø` as `o`, `ł` as `l`; `æ`, `ı` stay)."""
    bare = lambda word: "".join(base_letter(c) for c in word)  # noqa: E731
    blocks = [[[bare(word) for word in line] for line in block] for block in (poster.title, *poster.columns)]
    return Poster(blocks[0], blocks[1:], poster.script, poster.style, poster.backdrop)


def letters(n: int, seed: int) -> None:
    """Per letter with a diacritic: read as itself in correct renders (the marks recovered) and, in the same
    posters drawn without their marks, read with the mark (a mark counted that was not drawn: the cost)."""
    scorers = {way: scorer_with(way) for way in WAYS}
    right: dict[bool, Counter] = {way: Counter() for way in WAYS}
    false: dict[bool, Counter] = {way: Counter() for way in WAYS}
    seen: Counter = Counter()
    dropped: Counter = Counter()
    start = time.perf_counter()
    for case in cases(n, seed):
        # the correct render counts every letter with a diacritic; the bare one those whose mark it dropped
        renders = ((case["image"], right, seen, lambda letter: True),
                   (np.asarray(without_marks(case["poster"]).image()), false, dropped, lambda letter: base_letter(letter) != letter))
        for image, counts, tally, counted in renders:
            for way, scorer in scorers.items():
                details = scorer.score(scorer.ocr(image), case["expected"]).details
                pairs = readings(details.get("expected") or case["expected"], details.get("recognised") or "")
                marked = [(letter, as_read) for letter, as_read in pairs if counted(letter)]
                counts[way].update(letter for letter, as_read in marked if as_read == letter)
                if way:
                    tally.update(letter for letter, _ in marked)
    print(f"{n} carrier posters, {sum(seen.values())} letters with a diacritic ({time.perf_counter() - start:.0f} s)")
    print("letter    n  read as itself: first reading only -> with the second;   n  mark dropped, read with it: -> ")
    for letter in sorted(seen, key=lambda c: right[False][c] / seen[c]):
        if right[False][letter] < seen[letter] or right[True][letter] < seen[letter] or false[True][letter]:
            drop = (f"{dropped[letter]:4d}  {false[False][letter] / dropped[letter]:.2f} -> {false[True][letter] / dropped[letter]:.2f}"
                    if dropped[letter] else "")
            print(f"{letter:6s} {seen[letter]:4d}  {right[False][letter] / seen[letter]:.2f} -> {right[True][letter] / seen[letter]:.2f}   {drop}")
    total, bare_total = sum(seen.values()), max(sum(dropped.values()), 1)
    print(f"all    {total:4d}  {sum(right[False].values()) / total:.3f} -> {sum(right[True].values()) / total:.3f}   "
          f"{bare_total:4d}  {sum(false[False].values()) / bare_total:.3f} -> {sum(false[True].values()) / bare_total:.3f}")


def cost(n: int, rounds: int, seed: int) -> None:
    import statistics

    scorers = {way: scorer_with(way) for way in WAYS}
    images = [np.asarray(case["images"]["correct"]) for case in ladder_cases(n, seed, SPLITS["tuning"])]
    times: dict[tuple[bool, int], list[float]] = {}
    for scorer in scorers.values():
        scorer.ocr(images[0])                  # models loaded, sessions warm
    for _ in range(rounds):
        for way, scorer in scorers.items():
            for k, image in enumerate(images):
                start = time.perf_counter()
                scorer.ocr(image)
                times.setdefault((way, k), []).append(1000 * (time.perf_counter() - start))
    ratios = []
    for k in range(len(images)):
        off, on = statistics.median(times[False, k]), statistics.median(times[True, k])
        ratios.append(on / off)
        print(f"poster {k}: {off:.0f} -> {on:.0f} ms")
    print(f"median ratio {statistics.median(ratios):.2f} (load average {os.getloadavg()[0]:.1f})")


def ladders(args) -> None:
    scorer = Scorer()
    for split, n in zip(args.splits, args.sizes):
        reference: list[dict] = []
        off: dict[tuple[int, str], float] = {}
        for way in WAYS:
            kept = args.cache / f"second-{split}-{n}-{args.seed}-{'on' if way else 'off'}.pickle" if args.cache else None
            scored = score_reads(read_ladders(split, n, args.seed, scorer_with(way), kept), scorer)
            for group, scripts in GROUPS.items():
                rows, measures, moves, lost = group_report(scored, scripts, off)
                free = sum((s["typo"] or 0) >= 1.0 for s in rows)
                print(f"{split:7s} {group:17s} n={len(rows):3d} second reading {'on ' if way else 'off'}: {measures}, "
                      f"correct > repeat lost {lost}, typo scoring 1: {free}, {up_down(moves)}", flush=True)
            if not reference:
                reference, off = scored, rule_off(scored)
                continue
            for line in moved_correct(reference, scored, digits=3):
                print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("views", "letters", "cost", "ladders"))
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (cost)")
    parser.add_argument("--n", type=int, default=160, help="carrier posters (views, letters)")
    parser.add_argument("--posters", type=int, default=6, help="posters timed (cost)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--splits", nargs="+", default=["tuning", "hard", "photo", "coins", "fine", "stripes"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 80, 80, 30, 60, 60], help="posters per split")
    parser.add_argument("--cache", type=Path, help="a folder for the ladders' readings (pickles), read back if there")
    args = parser.parse_args()
    if args.part == "views":
        views(args.n, args.seed)
    elif args.part == "letters":
        letters(args.n, args.seed)
    elif args.part == "cost":
        cost(args.posters, args.rounds, args.seed)
    else:
        ladders(args)


if __name__ == "__main__":
    main()
