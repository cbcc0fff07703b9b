"""TR's unseen marks (`metrics.TR.params.unseen_marks`) on the tuning splits' ladders: what comparing the letters whose
marks the recogniser does not read without those marks gains on exact renders and costs on typos (docs/metrics/tr.md,
Marks the recogniser does not read).

    python benchmarks/bench_tr_unseen_marks.py [--splits tuning hard photo coins] [--sizes 60 80 80 30]
                                               [--marks "" "ťțï"] [--seed 0] [--cache DIR]

The letters come from the confusion table (`python benchmarks/bench_tr_confusions.py table`, 400 tuning carrier
posters): those read as their bare letter in more than half of correct renders. The ladders are read once
(benchmarks/bench_tr_spaces.py's readings; the same `--cache`) and scored with each letter set ("": the rule off).
Printed per split, script group and set: the validity measures, correct > repeat lost, the renders whose TR rose
against the rule off (and how many of them are typo renders), typo renders scoring 1, and the correct renders that
the rule lifts to TR >= 0.95.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from bench_tr_spaces import read_split

from vistar.validity.tr import GROUPS, Scorer, ladder_measures
from vistar.validity.tr_tuning import SPLITS

VARIANTS = ("correct", "typo", "missing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["tuning", "hard", "photo", "coins"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 80, 80, 30], help="posters per split")
    parser.add_argument("--marks", nargs="+", default=["", "ťțï"], help="letter sets to compare without marks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="the readings' folder (bench_tr_spaces.py), read back if there")
    args = parser.parse_args()
    for split, n in zip(args.splits, args.sizes):
        cases = read_split(split, n, args.seed, args.cache)
        off: dict[tuple[int, str], float] = {}
        for marks in args.marks:
            scorer, scored = Scorer({"unseen_marks": list(marks)}), []
            for case in cases:
                row = {key: case[key] for key in ("expected", "script", "repeated")}
                for variant, (ocr, _) in case["reads"].items():
                    row[variant] = scorer.score(ocr, case["expected"]).score
                scored.append(row)
            for group, scripts in GROUPS.items():
                part = [(k, s) for k, s in enumerate(scored) if s["script"] in scripts]
                rows = [s for _, s in part]
                measures = ", ".join(f"{key} {v:.3f}" for key, v in ladder_measures(rows).items())
                rises = [(k, v) for k, s in part for v in VARIANTS if (s[v] or 0) - off.get((k, v), s[v] or 0) > 1e-9]
                lifted = [s["expected"] for k, s in part if (s["correct"] or 0) >= 0.95 > off.get((k, "correct"), 1.0)]
                repeat = [s for s in rows if s["repeated"]]
                lost = sum((s["correct"] or 0) > (s["missing"] or 0) for s in repeat)
                print(f"{split:7s} {group:17s} n={len(rows):3d} unseen_marks {marks or '-':4s}: {measures}, correct > "
                      f"repeat lost {lost}/{len(repeat)}, renders up {len(rises)} (typo {sum(v == 'typo' for _, v in rises)}),"
                      f" typo renders at 1: {sum((s['typo'] or 0) >= 1 - 1e-9 for s in rows)}", flush=True)
                for text in lifted:
                    print(f"    lifted to >= 0.95: {text!r}")
            if not marks:
                off = {(k, v): s[v] or 0 for k, s in enumerate(scored) for v in VARIANTS}


if __name__ == "__main__":
    main()
