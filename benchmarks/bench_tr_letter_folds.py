"""TR's letter folds on the tuning splits' ladders: `metrics.TR.params.unseen_marks` (letters whose marks the
recogniser does not read, compared without them) and `cedilla_as_comma` (ş ţ and ș ț as one letter each): what each
gains on exact renders and costs on typos (docs/metrics/tr.md, Marks the recogniser does not read).

    python benchmarks/bench_tr_letter_folds.py [--splits tuning hard photo coins] [--sizes 60 80 80 30] [--seed 0]
                                               [--cache DIR]

The unseen letters come from the confusion table (`python benchmarks/bench_tr_confusions.py table`, 400 tuning
carrier posters): those read as their bare letter in more than half of correct renders. The ladders are read once
(benchmarks/bench_tr_spaces.py's readings; the same `--cache`) and scored with neither fold, each alone and both.
Printed per split, script group and setting: the validity measures, correct > repeat lost, the renders whose TR rose
against neither fold (and how many of them are typo renders), typo renders scoring 1, and the correct renders lifted
to TR >= 0.95.
"""
from __future__ import annotations

from bench_tr_spaces import read_split
from tr_ladder_report import group_report, ladder_parser, rule_off

from vistar.validity.tr import GROUPS, Scorer

SETTINGS = {"neither": {"unseen_marks": [], "cedilla_as_comma": False},
            "unseen marks": {"unseen_marks": list("ťțï"), "cedilla_as_comma": False},
            "cedilla as comma": {"unseen_marks": [], "cedilla_as_comma": True},
            "both (shipped)": {"unseen_marks": list("ťțï"), "cedilla_as_comma": True}}


def main() -> None:
    args = ladder_parser(__doc__).parse_args()
    for split, n in zip(args.splits, args.sizes):
        cases = read_split(split, n, args.seed, args.cache)
        off: dict[tuple[int, str], float] = {}
        for name, overrides in SETTINGS.items():
            scorer, scored = Scorer(overrides), []
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
                print(f"{split:7s} {group:17s} n={len(rows):3d} {name:16s}: {measures}, correct > repeat lost {lost}, "
                      f"renders up {len(rises)} (typo {sum(v == 'typo' for _, v in rises)}), typo renders at 1: "
                      f"{sum((s['typo'] or 0) >= 1 - 1e-9 for s in rows)}", flush=True)
                for text in lifted:
                    print(f"    lifted to >= 0.95: {text!r}")
            if not off:
                off = rule_off(scored)


if __name__ == "__main__":
    main()
