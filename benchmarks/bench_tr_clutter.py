"""TR's clutter rule (`metrics.TR.params.clutter_gap`) on the tuning splits' ladders: the unsure readings of no
asked word that it drops, by their distance from the surely read lines (docs/metrics/tr.md, Stray lines).

    python benchmarks/bench_tr_clutter.py [--splits tuning hard photo coins] [--sizes 60 80 80 30]
                                          [--gaps inf 5 4 3 2 1.5 1 0.5] [--seed 0] [--cache DIR]

The ladders are read once (benchmarks/bench_tr_spaces.py's readings; the same `--cache`) and scored with TR at
every `clutter_gap` (inf: the rule off). Printed per split, script group and gap: the validity measures, correct >
repeat lost, the renders whose TR rose and fell against the rule off; then every line dropped that the other
filters keep, with its confidence and its nearest asked word's char distance (a word of the poster read badly,
which the rule must not drop, reads within about half its letters of its word; photo detail matches none).
"""
from __future__ import annotations

import math

from bench_tr_spaces import read_split
from tr_ladder_report import group_report, ladder_parser, rule_off

from vistar.metrics.text_filters import clutter_lines, filter_lines
from vistar.metrics.text_similarity import normalize_text, word_cost
from vistar.validity.tr import GROUPS, Scorer


def dropped(ocr, expected: str, scorer: Scorer, gap: float) -> list[str]:
    """The lines the rule drops at `gap` in this reading that TR's other filters keep, described."""
    p = scorer.params
    lines, _ = filter_lines(ocr, float(p.min_confidence), float(p.min_box_height_frac), float(p.min_glyph_confidence),
                            float(p.glyph_gap), expected, float(p.stray_confidence), float(p.stray_angle))
    asked = normalize_text(expected).split()
    out = []
    for k in sorted(clutter_lines(lines, expected, float(p.stray_confidence), gap)):
        words = normalize_text(lines[k].text).split() or [""]
        near = min(word_cost(w, a) for w in words for a in asked)
        out.append(f"{lines[k].text!r} at {lines[k].confidence:.2f}, nearest asked word {near:.2f}")
    return out


def main() -> None:
    parser = ladder_parser(__doc__)
    parser.add_argument("--gaps", type=float, nargs="+", default=[math.inf, 5.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.5])
    args = parser.parse_args()
    for split, n in zip(args.splits, args.sizes):
        cases = read_split(split, n, args.seed, args.cache)
        off: dict[tuple[int, str], float] = {}
        for gap in args.gaps:
            scorer, scored, drops = Scorer({"clutter_gap": gap}), [], []
            for case in cases:
                row = {key: case[key] for key in ("expected", "script", "repeated")}
                for variant, (ocr, _) in case["reads"].items():
                    row[variant] = scorer.score(ocr, case["expected"]).score
                    drops += [f"{variant:8s} {line}" for line in dropped(ocr, case["expected"], scorer, gap)]
                scored.append(row)
            for group, scripts in GROUPS.items():
                rows, measures, moves, lost = group_report(scored, scripts, off)
                print(f"{split:7s} {group:17s} n={len(rows):3d} clutter_gap {gap:<4g}: {measures}, correct > repeat "
                      f"lost {lost}, renders up {sum(m > 1e-9 for _, m in moves)} down "
                      f"{sum(m < -1e-9 for _, m in moves)}", flush=True)
            if math.isinf(gap):
                off = rule_off(scored)
            for line in drops:
                print(f"    drops {line}")


if __name__ == "__main__":
    main()
