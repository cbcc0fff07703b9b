"""Word spaces from the CTC frame positions on the tuning splits' ladders — a candidate rule, measured and not
shipped: the space-only errors it removes and the false spaces it adds (docs/metrics/tr.md, Word spaces).

    python benchmarks/bench_tr_spaces.py [--splits tuning hard photo coins] [--sizes 60 80 80 30]
                                         [--gaps inf 4 3 2.5 2] [--space-probs 0.1] [--seed 0] [--cache DIR]

The ladders (vistar.validity.tr, vistar.validity.tr_tuning: correct, one typo, one word missing) are read once by
the OCR stage with the rule off; every line's posterior (the classes that reach 0.002 on some frame, and each
frame's arg-max) is kept, so each `space_gap` (and `space_prob`, `--space-probs`) re-decodes the same lines without
reading the images again (a self-check: with the rule off the re-decode gives the stage's own text and
alternatives). The rule (`wide_gaps`): a space between two characters whose step (frames between the frames that
emitted them) is at least `space_gap` times the line's median step, even where p(space) is about 0. Printed per split,
script group and gap: the validity measures, the correct renders read exactly (TR = 1) and those whose only error
is a word space, the renders whose TR rose and fell against the rule off, and the lines whose text changed.
`--cache` keeps the readings (pickles) and reads them back on the next run.
"""
from __future__ import annotations

import math
import pickle
from dataclasses import replace
from pathlib import Path

import numpy as np
from tr_ladder_report import group_report, ladder_parser, rule_off

from vistar.features import ocr as ocr_stage
from vistar.metrics.text_similarity import normalize_text
from vistar.validity.tr import GROUPS, Scorer, ladder_cases
from vistar.validity.tr_tuning import SPLITS

KEPT = 0.002   # a class whose posterior reaches this on some frame is kept for the re-decode
MIN_STEPS = 4  # a line needs this many steps between neighbouring characters for a median step to mean anything


def wide_gaps(frames: np.ndarray, chars: list[str], space_gap: float, fewest: int = MIN_STEPS) -> set[int]:
    """The characters k whose step from character k-1 is at least `space_gap` times the line's median step between
    neighbours: a word gap the recogniser saw as blank frames only. Steps next to an emitted space are left out of
    the median and never flagged; a line with fewer than `fewest` steps gets none."""
    steps = {k: int(frames[k] - frames[k - 1]) for k in range(1, len(frames)) if " " not in (chars[k], chars[k - 1])}
    if not math.isfinite(space_gap) or len(steps) < fewest:
        return set()
    typical = float(np.median(list(steps.values())))
    return {k for k, step in steps.items() if step >= space_gap * typical}


def decode(d: dict, space_prob: float, space_gap: float) -> ocr_stage.Reading:
    """The stage's decode of a kept posterior, with a space added before every `wide_gaps` character that has
    none (not next to a script written without spaces); alternatives moved with their characters."""
    reading = ocr_stage.restore_spaces(d["probs"], d["text"], d["space"], space_prob, d["character"])
    best = d["probs"].argmax(1)
    keep = best != 0
    keep[1:] &= best[1:] != best[:-1]
    frames = np.flatnonzero(keep)
    chars = [d["character"][i] for i in best[frames]]
    wide = wide_gaps(frames, chars, space_gap)
    if not wide or str(reading).replace(" ", "") != "".join(chars).replace(" ", ""):
        return reading
    out, where, k = [], {}, 0   # k: the emitted character `char` is (else a restored space); where: old -> new index
    for i, char in enumerate(str(reading)):
        if k < len(chars) and char == chars[k]:
            if (k in wide and out and out[-1] != " "
                    and not (ocr_stage._wide(char) or ocr_stage._wide(chars[k - 1]))):
                out.append(" ")
            k += 1
        where[i] = len(out)
        out.append(char)
    again = ocr_stage.Reading("".join(out))
    again.alternatives = tuple((where[i], alt, share) for i, alt, share in reading.alternatives)
    return again


class Recorder:
    """Wraps `restore_spaces` to keep each decoded line's posterior, reduced to the classes that matter."""

    def __init__(self) -> None:
        self.shipped, self.lines = ocr_stage.restore_spaces, []

    def __call__(self, probs, text, space, space_prob, character, *args, **kwargs):
        reading = self.shipped(probs, text, space, space_prob, character, *args, **kwargs)
        cols = sorted({0, *([space] if space is not None else []), *probs.argmax(1).tolist(),
                       *np.flatnonzero(probs.max(0) >= KEPT).tolist()})
        self.lines.append({"reading": str(reading), "alternatives": getattr(reading, "alternatives", ()), "text": text, "probs": probs[:, cols].astype(np.float32),
                           "space": cols.index(space) if space is not None else None,
                           "character": [character[c] for c in cols]})
        return reading


def read_split(split: str, n: int, seed: int, cache: Path | None) -> list[dict]:
    kept = cache / f"spaces-{split}-{n}-{seed}.pickle" if cache else None
    if kept and kept.exists():
        return pickle.loads(kept.read_bytes())
    scorer, recorder, out = Scorer(), Recorder(), []
    ocr_stage.restore_spaces = recorder
    try:
        for case in ladder_cases(n, seed, SPLITS[split]):
            reads = {}
            for variant, image in case.pop("images").items():
                recorder.lines = []
                reads[variant] = (scorer.ocr(image), recorder.lines)
            out.append({**case, "reads": reads})
    finally:
        ocr_stage.restore_spaces = recorder.shipped
    if kept:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(pickle.dumps(out))
    return out


def redecode(ocr, decodes: list[dict], space_prob: float, space_gap: float):
    """The OCR result with every line's text decoded again at `space_gap` (the line found by its text and
    alternatives as read: a glyph's two readings, RapidOCR's crop and the upright one, may share a text)."""
    by_text = {(d["reading"], d["alternatives"]): d for d in reversed(decodes)}
    lines = []
    for line in ocr.lines:
        d = by_text.get((line.text, line.alternatives))
        if d is None:
            lines.append(line)
            continue
        again = decode(d, space_prob, space_gap)
        lines.append(replace(line, text=str(again), alternatives=getattr(again, "alternatives", ())))
    return replace(ocr, lines=tuple(lines))


def space_only(read: str | None, expected: str) -> bool:
    return bool(read) and read != expected and read.replace(" ", "") == expected.replace(" ", "")


def main() -> None:
    parser = ladder_parser(__doc__)
    parser.add_argument("--gaps", type=float, nargs="+", default=[math.inf, 4.0, 3.0, 2.5, 2.0])
    parser.add_argument("--space-probs", type=float, nargs="+", help="space_prob values (default: the shipped one)")
    args = parser.parse_args()
    scorer = Scorer()
    shipped = float(scorer.ctx.params("ocr", ocr_stage.OcrSettings).space_prob)
    grid = [(shipped, math.inf)] + [(p, g) for p in args.space_probs or [shipped] for g in args.gaps if (p, g) != (shipped, math.inf)]
    for split, n in zip(args.splits, args.sizes):
        cases = read_split(split, n, args.seed, args.cache)
        for case in cases:   # the self-check: with the rule off the re-decode is the stage's own reading
            for ocr, decodes in case["reads"].values():
                assert redecode(ocr, decodes, shipped, math.inf).lines == ocr.lines
        off: dict[tuple[int, str], float] = {}
        for space_prob, gap in grid:
            scored, changed = [], []
            for k, case in enumerate(cases):
                row = {key: case[key] for key in ("expected", "script", "repeated")}
                for variant, (ocr, decodes) in case["reads"].items():
                    again = redecode(ocr, decodes, space_prob, gap)
                    result = scorer.score(again, case["expected"])
                    row[variant], row[f"{variant}_read"] = result.score, result.details.get("recognised")
                    changed += [(variant, a.text, b.text) for a, b in zip(ocr.lines, again.lines) if a.text != b.text]
                scored.append(row)
            for group, scripts in GROUPS.items():
                rows, measures, moves, lost = group_report(scored, scripts, off)
                exact = sum((s["correct"] or 0) >= 1.0 for s in rows)
                spaces = sum(space_only(s["correct_read"], normalize_text(s["expected"])) for s in rows)
                print(f"{split:7s} {group:17s} n={len(rows):3d} space_prob {space_prob:<5g} space_gap {gap:<5g}: {measures}, correct > repeat lost "
                      f"{lost}, correct read exactly {exact}, only a space wrong {spaces}, renders up "
                      f"{sum(m > 1e-9 for _, m in moves)} down {sum(m < -1e-9 for _, m in moves)}", flush=True)
            if (space_prob, gap) == (shipped, math.inf):
                off = rule_off(scored)
            else:
                for variant, before, after in changed:
                    print(f"    {variant:8s} {before!r} -> {after!r}")


if __name__ == "__main__":
    main()
