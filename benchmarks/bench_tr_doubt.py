"""TR's recogniser-doubt rule (`metrics.TR.params.alt_prob`) on the tuning splits' ladders: what it gains on exact
renders and what it costs on typos (docs/metrics/tr.md, Recogniser doubt).

    python benchmarks/bench_tr_doubt.py [--splits tuning hard photo coins] [--sizes 60 80 80 30]
                                        [--alt-probs inf 0.5 0.3 0.2 0.1 0.05] [--seed 0] [--cache DIR]

The ladders (vistar.validity.tr, vistar.validity.tr_tuning: each poster drawn correct, with one typo and with one
word missing) are read once by the shipped OCR stage, which keeps each character's close alternatives, and scored
with TR at every `alt_prob` (inf: the rule off). Printed per split, script group and `alt_prob`: correct > typo,
typo > missing word, exact render TR >= 0.95, correct > repeat lost, the typo renders scoring 1, how many typo
renders score higher than with the rule off and their mean rise, the mean margin correct - typo with the rule off
and on (what the rule costs a typo: a typo's own letter stays charged when this margin holds), and the swaps the
correct renders took (`1→ı`). `--cache` keeps the OCR results (pickles) and reads them back on the next run.
"""
from __future__ import annotations

import argparse
import math
import pickle
from collections import Counter
from pathlib import Path

from vistar.validity.tr import GROUPS, Scorer, ladder_cases, ladder_measures, score_ladder
from vistar.validity.tr_tuning import SPLITS

VARIANTS = ("correct", "typo", "missing")


def ladders(split: str, n: int, seed: int, cache: Path | None) -> list[dict]:
    kept = cache / f"{split}-{n}-{seed}.pickle" if cache else None
    if kept and kept.exists():
        return pickle.loads(kept.read_bytes())
    scored = score_ladder(ladder_cases(n, seed, SPLITS[split]), Scorer())
    if kept:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(pickle.dumps(scored))
    return scored


def rescore(scored: list[dict], alt_prob: float) -> list[dict]:
    """The ladders' TR at `alt_prob` from the stored OCR results, with the swaps each correct render took."""
    scorer, out = Scorer({"alt_prob": alt_prob}), []
    for case in scored:
        results = {k: scorer.score(case["ocr"][k], case["expected"]) for k in VARIANTS}
        out.append({**case, **{k: r.score for k, r in results.items()},
                    "swaps": results["correct"].details.get("read_as_alternative", [])})
    return out


def report(split: str, group: str, alt_prob: float, part: list[dict], off: list[dict]) -> str:
    measures = ", ".join(f"{k} {v:.3f}" for k, v in ladder_measures(part).items())
    repeat = [s for s in part if s["repeated"]]
    lost = sum((s["correct"] or 0) > (s["missing"] or 0) for s in repeat)
    rises = [(s["typo"] or 0) - (o["typo"] or 0) for s, o in zip(part, off)]
    risen = [r for r in rises if r > 1e-9]
    cost = f"typo rose {len(risen)} (mean {sum(risen) / len(risen):.3f})" if risen else "typo rose 0"
    gap = [sum((s["correct"] or 0) - (s["typo"] or 0) for s in p) / max(len(p), 1) for p in (off, part)]
    top = ", ".join(f"{k} {v}" for k, v in Counter(x for s in part for x in s["swaps"]).most_common(8))
    return (f"{split:7s} {group:17s} n={len(part):3d} alt_prob {alt_prob:<5g}: {measures}, correct > repeat lost "
            f"{lost}/{len(repeat)}, typo scoring 1: {sum((s['typo'] or 0) >= 1.0 for s in part)}, {cost}, mean correct - typo "
            f"{gap[0]:.3f} -> {gap[1]:.3f}; swaps: {top}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["tuning", "hard", "photo", "coins"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 80, 80, 30], help="posters per split")
    parser.add_argument("--alt-probs", type=float, nargs="+", default=[math.inf, 0.5, 0.3, 0.2, 0.1, 0.05])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="a folder for the ladders' OCR results (pickles), read back if there")
    args = parser.parse_args()
    for split, n in zip(args.splits, args.sizes):
        scored = ladders(split, n, args.seed, args.cache)
        off = rescore(scored, math.inf)
        for alt_prob in args.alt_probs:
            rescored = rescore(scored, alt_prob)
            for group, scripts in GROUPS.items():
                keep = [k for k, s in enumerate(rescored) if s["script"] in scripts]
                print(report(split, group, alt_prob, [rescored[k] for k in keep], [off[k] for k in keep]), flush=True)

if __name__ == "__main__":
    main()
