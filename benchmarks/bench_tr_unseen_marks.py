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

from bench_tr_spaces import read_split
from tr_ladder_report import group_report, ladder_parser, rule_off

from vistar.validity.tr import GROUPS, Scorer


def main() -> None:
    parser = ladder_parser(__doc__)
    parser.add_argument("--marks", nargs="+", default=["", "ťțï"], help="letter sets to compare without marks")
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
                rows, measures, moves, lost = group_report(scored, scripts, off)
                rises = [key for key, m in moves if m > 1e-9]
                lifted = [scored[k]["expected"] for k, v in rises if v == "correct" and scored[k]["correct"] >= 0.95
                          and off[(k, v)] < 0.95]
                print(f"{split:7s} {group:17s} n={len(rows):3d} unseen_marks {marks or '-':4s}: {measures}, correct > "
                      f"repeat lost {lost}, renders up {len(rises)} (typo {sum(v == 'typo' for _, v in rises)}),"
                      f" typo renders at 1: {sum((s['typo'] or 0) >= 1 - 1e-9 for s in rows)}", flush=True)
                for text in lifted:
                    print(f"    lifted to >= 0.95: {text!r}")
            if not marks:
                off = rule_off(scored)


if __name__ == "__main__":
    main()
