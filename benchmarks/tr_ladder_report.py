"""What the TR tuning-ladder benches share: their command line and one script group's printed measures.

Used by bench_tr_spaces.py, bench_tr_clutter.py and bench_tr_letter_folds.py, which score the same stored readings
(bench_tr_spaces.read_split) at each value of one rule and compare every render with the rule off; `read_ladders`
and `score_reads` by bench_tr_ink.py, bench_tr_clean_look.py and bench_tr_second_reading.py, which read the ladders
again for each OCR setting (the last two print `up_down` and `moved_correct`, as bench_tr_plain_bars.py does;
`ocr_scorer` changes the settings).
"""
from __future__ import annotations

import argparse
import pickle
from pathlib import Path

from vistar.api import StageContext
from vistar.validity.tr import Scorer, ladder_cases, ladder_measures
from vistar.validity.tr_tuning import SPLITS

VARIANTS = ("correct", "typo", "missing")


def ocr_scorer(**ocr) -> Scorer:
    """The shipped OCR and TR with these `features.ocr` settings changed."""
    scorer = Scorer()
    scorer.ctx = StageContext(features={**scorer.ctx.features, "ocr": {**scorer.ctx.features.get("ocr", {}), **ocr}})
    return scorer


def ladder_parser(doc: str) -> argparse.ArgumentParser:
    """The splits, their sizes, the seed and the readings' cache folder; the bench adds its rule's values."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["tuning", "hard", "photo", "coins"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 80, 80, 30], help="posters per split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="a folder for the readings (pickles), read back if there")
    return parser


def group_report(scored: list[dict], scripts, off: dict[tuple[int, str], float]) -> tuple[list[dict], str, list, str]:
    """One script group's ladders: its rows, the validity measures as printed, each render's (index, variant) and
    TR change against `off` (the rule off; empty: no change), and correct > repeat lost as "k/n"."""
    part = [(k, s) for k, s in enumerate(scored) if s["script"] in scripts]
    rows = [s for _, s in part]
    measures = ", ".join(f"{key} {v:.3f}" for key, v in ladder_measures(rows).items())
    moves = [((k, v), (s[v] or 0) - off.get((k, v), s[v] or 0)) for k, s in part for v in VARIANTS]
    repeat = [s for s in rows if s["repeated"]]
    return rows, measures, moves, f"{sum((s['correct'] or 0) > (s['missing'] or 0) for s in repeat)}/{len(repeat)}"


def rule_off(scored: list[dict]) -> dict[tuple[int, str], float]:
    """Every render's TR, to compare the other values of the rule with."""
    return {(k, v): s[v] or 0 for k, s in enumerate(scored) for v in VARIANTS}


def score_reads(cases: list[dict], scorer) -> list[dict]:
    """Each case of `read_ladders` scored by SCORER's TR: its facts, each variant's score and what TR recognised
    (`<variant>_read`)."""
    rows = []
    for case in cases:
        row = {key: case[key] for key in ("expected", "script", "repeated", "backdrop")}
        for variant, ocr in case["reads"].items():
            result = scorer.score(ocr, case["expected"])
            row[variant], row[f"{variant}_read"] = result.score, result.details.get("recognised")
        rows.append(row)
    return rows


def read_ladders(split: str, n: int, seed: int, scorer, kept: Path | None) -> list[dict]:
    """The split's ladders read by SCORER's OCR, per case {variant: OcrResult} beside the case's facts; kept as a
    pickle at KEPT (None: not kept) and read back from there when it exists."""
    if kept and kept.exists():
        return pickle.loads(kept.read_bytes())
    out = []
    for case in ladder_cases(n, seed, SPLITS[split]):
        images = case.pop("images")
        out.append({**case, "reads": {variant: scorer.ocr(image) for variant, image in images.items()}})
    if kept:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(pickle.dumps(out))
    return out


def up_down(moves: list) -> str:
    """How many renders of `group_report`'s moves rose and fell."""
    return f"renders up {sum(m > 1e-9 for _, m in moves)} down {sum(m < -1e-9 for _, m in moves)}"


def moved_correct(reference: list[dict], scored: list[dict], digits: int = 2) -> list[str]:
    """Each correct render whose TR moved from REFERENCE to SCORED (`score_reads` rows), with both readings."""
    return [f"    correct {before['correct'] or 0:.{digits}f} -> {after['correct'] or 0:.{digits}f}: {before['expected']!r}\n"
            f"        read {before['correct_read']!r}\n        now  {after['correct_read']!r}"
            for before, after in zip(reference, scored) if abs((after["correct"] or 0) - (before["correct"] or 0)) > 1e-9]
