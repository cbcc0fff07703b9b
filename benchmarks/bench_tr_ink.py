"""Reading the ink (`features.ocr.ink_reread`, vistar/features/ocr_ink.py) on the tuning splits' ladders: what a
clean re-read of the lines read unsurely changes (docs/metrics/tr_reading.md, Reading the ink).

    python benchmarks/bench_tr_ink.py [--splits stripes tuning hard photo coins] [--sizes 60 60 80 80 30]
                                      [--values 0 0.9 0.97 1.01] [--seed 0] [--cache DIR]

Each split's ladders (vistar.validity.tr_tuning.SPLITS: correct, one typo, one word missing) are read by the OCR
stage once per `ink_reread` value (0: off, the first value is the reference) and scored by the shipped TR. Printed
per split, script group and value: the validity measures, correct > repeat lost, the correct renders read exactly
(TR = 1); for the reference, every correct render below 0.95 with what was read; for the other values, every
render whose TR moved, with both readings. `--cache` keeps the readings (pickles) and reads them back.
"""
from __future__ import annotations

import argparse
import pickle
from pathlib import Path

from vistar.api import StageContext
from vistar.validity.tr import GROUPS, Scorer, ladder_cases, ladder_measures
from vistar.validity.tr_tuning import SPLITS

VARIANTS = ("correct", "typo", "missing")


def read_split(split: str, n: int, seed: int, ink: float, cache: Path | None) -> list[dict]:
    """The ladders' OCR results with `ink_reread` = `ink`, per case {variant: OcrResult} beside the case's facts."""
    kept = cache / f"ink-{split}-{n}-{seed}-{ink:g}.pickle" if cache else None
    if kept and kept.exists():
        return pickle.loads(kept.read_bytes())
    scorer = Scorer()
    features = scorer.ctx.features
    scorer.ctx = StageContext(features={**features, "ocr": {**features["ocr"], "ink_reread": ink}})
    out = []
    for case in ladder_cases(n, seed, SPLITS[split]):
        images = case.pop("images")
        out.append({**case, "reads": {variant: scorer.ocr(image) for variant, image in images.items()}})
    if kept:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(pickle.dumps(out))
    return out


def scores(cases: list[dict], scorer: Scorer) -> list[dict]:
    rows = []
    for case in cases:
        row = {key: case[key] for key in ("expected", "script", "repeated", "backdrop")}
        for variant, ocr in case["reads"].items():
            result = scorer.score(ocr, case["expected"])
            row[variant], row[f"{variant}_read"] = result.score, result.details.get("recognised")
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["stripes", "tuning", "hard", "photo", "coins"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 60, 80, 80, 30], help="posters per split")
    parser.add_argument("--values", type=float, nargs="+", default=[0.0, 0.9, 0.97, 1.01], help="ink_reread values")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="a folder for the readings (pickles), read back if there")
    args = parser.parse_args()
    scorer = Scorer()
    for split, n in zip(args.splits, args.sizes):
        reference: list[dict] = []
        for ink in args.values:
            rows = scores(read_split(split, n, args.seed, ink, args.cache), scorer)
            for group, scripts in GROUPS.items():
                part = [s for s in rows if s["script"] in scripts]
                measures = ", ".join(f"{key} {v:.3f}" for key, v in ladder_measures(part).items())
                repeat = [s for s in part if s["repeated"]]
                lost = sum((s["correct"] or 0) > (s["missing"] or 0) for s in repeat)
                exact = sum((s["correct"] or 0) >= 1.0 for s in part)
                print(f"{split:7s} {group:17s} n={len(part):3d} ink_reread {ink:<5g}: {measures}, correct > repeat lost "
                      f"{lost}/{len(repeat)}, correct read exactly {exact}", flush=True)
            if not reference:
                reference = rows
                for s in rows:
                    if (s["correct"] or 0) < 0.95:
                        print(f"    below 0.95 ({s['correct'] or 0:.2f}) over {s['backdrop']}: {s['expected']!r} read {s['correct_read']!r}")
                continue
            for before, after in zip(reference, rows):
                for variant in VARIANTS:
                    if abs((before[variant] or 0) - (after[variant] or 0)) > 1e-9:
                        print(f"    {variant:8s} {before[variant] or 0:.2f} -> {after[variant] or 0:.2f}: "
                              f"{before[f'{variant}_read']!r} -> {after[f'{variant}_read']!r} (asked {before['expected']!r})")


if __name__ == "__main__":
    main()
