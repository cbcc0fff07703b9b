"""How often the detector shatters a line into one- and two-letter boxes on the tuning splits' ladders: is there
anything to tune a union re-read on (docs/metrics/tr.md, Word spaces and shattered lines)?

    python benchmarks/bench_tr_shattered.py [--splits tuning hard photo coins] [--sizes 60 80 80 30] [--seed 0]
                                            [--cache DIR] [--stripes 30]

From the ladders' readings (benchmarks/bench_tr_spaces.py, the same `--cache`), after TR's filters: a *run* is two
or more neighbouring lines of one row (levelled as TR levels them) of at most two letters each, at most one median
line height apart. Printed per split: the runs in correct, typo and missing-word renders, and each run's pieces
with the asked words they lie nearest; a run whose pieces, joined, spell an asked word more closely than any
piece alone is a shattered word. `--stripes N`: also N posters drawn over the stripes texture alone (tuning
vocabulary, 0-15 degrees, 14-34 px, seeds of their own), read here, where the detector shatters most.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from bench_tr_spaces import read_split

from vistar.metrics.text_filters import filter_lines
from vistar.metrics.text_layout import level_boxes, rows_of
from vistar.metrics.text_similarity import normalize_text, word_cost
from vistar.validity.tr import Scorer, Split, ladder_cases
from vistar.validity.tr_tuning import SPLITS

STRIPES = Split(130_000, (0.0, 15.0), (14, 34), (512, 576), ("stripes",), 0)


def runs(lines: list) -> list[list[str]]:
    """Runs of neighbouring short lines on one row, as their texts."""
    if not lines:
        return []
    boxes, median = level_boxes(lines)
    out = []
    for row in rows_of(boxes, median):
        current: list = []
        for box in row:
            short = len(normalize_text(box[4].text).replace(" ", "")) <= 2
            if short and current and box[0] - current[-1][2] <= median:
                current.append(box)
                continue
            if len(current) >= 2:
                out.append([b[4].text for b in current])
            current = [box] if short else []
        if len(current) >= 2:
            out.append([b[4].text for b in current])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["tuning", "hard", "photo", "coins"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 80, 80, 30], help="posters per split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="the readings' folder (bench_tr_spaces.py), read back if there")
    parser.add_argument("--stripes", type=int, default=0, help="posters over stripes alone, read here")
    args = parser.parse_args()
    scorer = Scorer()
    p = scorer.params
    sets = [(split, lambda split=split, n=n: read_split(split, n, args.seed, args.cache))
            for split, n in zip(args.splits, args.sizes)]
    if args.stripes:
        sets.append(("stripes", lambda: [{**case, "reads": {k: (scorer.ocr(image), []) for k, image in case.pop("images").items()}}
                                         for case in ladder_cases(args.stripes, args.seed, STRIPES)]))
    for split, cases in sets:
        found: dict[str, list] = {"correct": [], "typo": [], "missing": []}
        shattered = 0
        for case in cases():
            asked = normalize_text(case["expected"]).split()
            for variant, (ocr, _) in case["reads"].items():
                lines, _ = filter_lines(ocr, float(p.min_confidence), float(p.min_box_height_frac),
                                        float(p.min_glyph_confidence), float(p.glyph_gap), case["expected"],
                                        float(p.stray_confidence), float(p.stray_angle))
                for pieces in runs(lines):
                    joined = normalize_text("".join(pieces)).replace(" ", "")
                    alone = min(word_cost(normalize_text(t), a) for t in pieces for a in asked)
                    together = min(word_cost(joined, a) for a in asked)
                    shattered += variant == "correct" and together < alone
                    found[variant].append(f"{pieces} joined {together:.2f}, alone {alone:.2f} ({case['expected']!r})")
        print(f"{split:7s} runs of short lines: correct {len(found['correct'])}, typo {len(found['typo'])}, missing "
              f"{len(found['missing'])}; in correct renders closer to an asked word joined: {shattered}")
        for variant, items in found.items():
            for item in items:
                print(f"    {variant:8s} {item}")


if __name__ == "__main__":
    main()
