"""The OCR stage's plain bars (a lone `I` read from its shape; vistar/features/ocr_bars.py) measured on tuning data:
the lone bars it reads, the `1`s it must leave alone, and what it does to TR's ladders (docs/metrics/tr_reading.md,
Plain bars).

    python benchmarks/bench_tr_plain_bars.py glyphs [--n 60] [--seed 1000] [--glyphs I l 1]
    python benchmarks/bench_tr_plain_bars.py ladders [--splits tuning hard photo coins fine stripes]
                                                     [--sizes 60 80 80 30 60 60] [--seed 0]

Both read every render once with `features.ocr.plain_bars` off and apply `ocr_bars.read_bars` to that reading,
which is what the stage does last with the setting on (tests/test_ocr_bars.py checks the two agree).

glyphs: Latin posters over the tuning photos, each ending with a line of one glyph (`lone_glyph_cases`; none of
the validation posters' words); per glyph: read as itself (in the text TR compares) without and with the bars, the
correct renders scoring TR >= 0.95, and the glyphs read as a bar (`I`) that were not drawn as one.

ladders: each tuning split's ladders (correct / typo / missing word) without and with the bars, scored by the
shipped TR: the validity measures per script group, the renders whose TR rose and fell, the bars read (lines
added or read again), each moved correct render with both readings, and the bars' cost in milliseconds per image.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from tr_ladder_report import VARIANTS, group_report, moved_correct, ocr_scorer, rule_off, score_reads, up_down

from vistar.features.ocr_bars import read_bars
from vistar.metrics.text_similarity import normalize_text
from vistar.validity.tr import GROUPS, ladder_cases
from vistar.validity.tr_tuning import LONE_GLYPH_TUNING, SPLITS, lone_glyph_cases


def with_bars(image, ocr):
    """OCR as the stage reads it with `plain_bars` on, from its reading with the setting off."""
    from dataclasses import replace

    return replace(ocr, lines=read_bars(np.asarray(image), ocr.lines))


def glyphs(n: int, seed: int, drawn: tuple[str, ...]) -> None:
    scorer = ocr_scorer(plain_bars=False)
    tally: dict[str, dict[str, int]] = {}
    for case in lone_glyph_cases(n, seed, drawn, LONE_GLYPH_TUNING):
        off = scorer.ocr(case["image"])
        row = tally.setdefault(case["glyph"], {"n": 0})
        row["n"] += 1
        for way, ocr in (("off", off), ("on", with_bars(case["image"], off))):
            result = scorer.score(ocr, case["expected"])
            words = (result.details.get("recognised") or "").split()
            row[f"read {way}"] = row.get(f"read {way}", 0) + (normalize_text(case["glyph"]) in words)
            row[f"exact {way}"] = row.get(f"exact {way}", 0) + ((result.score or 0.0) >= 0.95)
            if way == "on":
                bars = sum(line.text == "I" and line not in off.lines for line in ocr.lines)
                row["read as a bar"] = row.get("read as a bar", 0) + (bars if case["glyph"] not in "Il" else 0)
    for glyph, row in sorted(tally.items()):
        print(f"lone {glyph!r}: n={row['n']:3d}  read as itself {row['read off']} -> {row['read on']}  "
              f"correct render TR>=0.95 {row['exact off']} -> {row['exact on']}  bars read where none was drawn "
              f"{row['read as a bar']}")


def ladders(splits: list[str], sizes: list[int], seed: int) -> None:
    scorer = ocr_scorer(plain_bars=False)
    for split, n in zip(splits, sizes):
        reads: dict[str, list[dict]] = {"off": [], "on": []}   # per case, as read_ladders gives it: facts and reads
        bars, took = 0, []
        for case in ladder_cases(n, seed, SPLITS[split]):
            images = case.pop("images")
            off = {variant: scorer.ocr(images[variant]) for variant in VARIANTS}
            on = {}
            for variant in VARIANTS:
                start = time.perf_counter()
                on[variant] = with_bars(images[variant], off[variant])
                took.append(1000 * (time.perf_counter() - start))
                bars += sum(line not in off[variant].lines for line in on[variant].lines)
            reads["off"].append({**case, "reads": off})
            reads["on"].append({**case, "reads": on})
        scored = {way: score_reads(cases, scorer) for way, cases in reads.items()}
        off_scores = rule_off(scored["off"])
        for way in scored:
            for group, scripts in GROUPS.items():
                _, measures, moves, lost = group_report(scored[way], scripts, off_scores if way == "on" else {})
                print(f"{split:7s} {group:17s} plain bars {way:3s}: {measures}, correct > repeat lost {lost}, {up_down(moves)}",
                      flush=True)
        print(f"{split:7s} bars read: {bars} lines (added, or a line read again) in {3 * n} renders; read_bars "
              f"{np.median(took):.1f} ms per image (median, p90 {np.percentile(took, 90):.1f})")
        for line in moved_correct(scored["off"], scored["on"], digits=3):
            print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("glyphs", "ladders"))
    parser.add_argument("--n", type=int, default=60, help="lone-glyph posters (glyphs)")
    parser.add_argument("--seed", type=int, default=None, help="glyphs: 1000, ladders: 0")
    parser.add_argument("--glyphs", nargs="+", default=["I", "l", "1"])
    parser.add_argument("--splits", nargs="+", default=["tuning", "hard", "photo", "coins", "fine", "stripes"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 80, 80, 30, 60, 60], help="posters per split")
    args = parser.parse_args()
    if args.part == "glyphs":
        glyphs(args.n, 1000 if args.seed is None else args.seed, tuple(args.glyphs))
    else:
        ladders(args.splits, args.sizes, 0 if args.seed is None else args.seed)


if __name__ == "__main__":
    main()
