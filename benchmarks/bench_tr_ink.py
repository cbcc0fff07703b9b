"""Reading the ink, measured and not used (docs/metrics/tr_reading.md, Reading the ink): a text line re-read from a
clean crop, its ink dark on white and everything else white, kept when the recogniser is surer of it.

    python benchmarks/bench_tr_ink.py [--splits stripes tuning hard photo coins] [--sizes 60 30 40 40 15]
                                      [--values 0 1.01] [--rule surer|marks] [--seed 0] [--cache DIR]

Text in a generated poster is mostly one colour; over diagonal stripes the recogniser sees stripe edges through
the letters. The ink is the colour common inside a crop but rare on its border (the border is backdrop): the
crop's pixels go into CLUSTERS colour clusters (k-means in Lab, farthest-point start, so deterministic), and of
the clusters covering at most MAX_BORDER_SHARE of the border and MIN_INK_SHARE of the crop, the one that touches
the backdrop least is ink (an outlined letter's fill, not its outline). In the OCR stage's looks
(vistar/features/ocr_batched.py), every line whose first reading is below `--values` (0: off, the reference) is
read again clean before the glyph re-read, and the clean reading replaces it when its confidence is higher (`--rule surer`) — and, with `--rule marks`, only
when it is the same letters with more marks (ş where the colour crop read s).

Each split's ladders (vistar.validity.tr_tuning.SPLITS: correct, one typo, one word missing) are read once per
value and scored by the shipped TR. Printed per split, script group and value: the validity measures, correct >
repeat lost, the correct renders read exactly (TR = 1); for the reference, every correct render below 0.95 with
what was read; for the other values, every render whose TR moved, with both readings. `--cache` keeps the
readings (pickles) and reads them back.
"""
from __future__ import annotations

import argparse
import unicodedata
from pathlib import Path

import numpy as np
from tr_ladder_report import read_ladders, score_reads

from vistar.features import ocr_batched
from vistar.metrics.text_similarity import strip_accents
from vistar.validity.tr import GROUPS, Scorer, ladder_measures
from vistar.validity.tr_tuning import SPLITS

VARIANTS = ("correct", "typo", "missing")
CLUSTERS = 5
MAX_BORDER_SHARE = 0.1     # of the crop's border pixels: a cluster above this is backdrop
MIN_INK_SHARE = 0.03       # of the crop's pixels: fewer is no text (noise, a thin anti-aliased rim)
ITERATIONS = 10


def ink_mask(crop: np.ndarray, clusters: int = CLUSTERS) -> np.ndarray | None:
    """The pixels of `crop` (H×W×3, uint8, BGR as RapidOCR crops) in the ink's colour cluster, or None when no
    cluster is rare on the border and common inside (no ink colour stands out)."""
    import cv2

    height, width = crop.shape[:2]
    if height < 4 or width < 4:
        return None
    lab = cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float32)
    labels = _kmeans(lab, clusters).reshape(height, width)
    border = np.concatenate([labels[0], labels[-1], labels[1:-1, 0], labels[1:-1, -1]])
    border_share = np.bincount(border, minlength=clusters) / border.size
    share = np.bincount(labels.ravel(), minlength=clusters) / labels.size
    candidates = [c for c in range(clusters) if border_share[c] <= MAX_BORDER_SHARE and share[c] >= MIN_INK_SHARE]
    if not candidates:
        return None
    backdrop = np.isin(labels, [c for c in range(clusters) if c not in candidates])
    near = _touching(backdrop)
    # an outlined letter gives two candidates, its fill and its outline: the fill is the one that does not touch
    # the backdrop
    return labels == min(candidates, key=lambda c: (near[labels == c].mean(), -share[c]))


def _touching(mask: np.ndarray) -> np.ndarray:
    """The pixels with a 4-neighbour in `mask` (or in it)."""
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    out[:, 1:] |= mask[:, :-1]
    out[:, :-1] |= mask[:, 1:]
    return out


def clean_crop(crop: np.ndarray) -> np.ndarray | None:
    """`crop` redrawn as its ink (black) on white, or None when `ink_mask` finds no ink."""
    mask = ink_mask(crop)
    if mask is None:
        return None
    clean = np.full(crop.shape, 255, np.uint8)
    clean[mask] = 0
    return clean


def _kmeans(points: np.ndarray, k: int) -> np.ndarray:
    """Cluster labels of `points` (N×3): Lloyd's iterations from farthest-point centres (the first is the point
    farthest from the mean), so the same crop always gives the same clusters."""
    centres = [points[np.argmax(((points - points.mean(0)) ** 2).sum(1))]]
    for _ in range(1, k):
        nearest = np.min([((points - c) ** 2).sum(1) for c in centres], axis=0)
        centres.append(points[np.argmax(nearest)])
    centre = np.stack(centres)
    for _ in range(ITERATIONS):
        labels = ((points[:, None, :] - centre[None]) ** 2).sum(2).argmin(1)
        for c in range(k):
            members = points[labels == c]
            if len(members):
                centre[c] = members.mean(0)
    return ((points[:, None, :] - centre[None]) ** 2).sum(2).argmin(1)


def _more_marks(first: str, clean: str) -> bool:
    """`clean` is `first` with marks added (the same base letters, more combining marks): the `marks` rule."""
    count = lambda t: sum(unicodedata.combining(c) > 0 for c in unicodedata.normalize("NFD", t))  # noqa: E731
    return strip_accents(first) == strip_accents(clean) and count(clean) > count(first)


class InkReread:
    """While active, the stage's looks read every line below `below` again clean (`clean_crop`) before the glyph
    re-read, keeping the clean reading where the recogniser is surer: `ocr_batched._detect` is wrapped to see the
    looks' crops and `ocr_batched.reread_glyphs` to re-read them first."""

    def __init__(self, below: float, rule: str = "surer"):
        self.below, self.rule = below, rule
        self.crops: list[np.ndarray] = []
        self.shipped = ocr_batched._detect, ocr_batched.reread_glyphs

    def __enter__(self):
        detect, glyphs = self.shipped

        def detecting(*args, **kwargs):
            found = detect(*args, **kwargs)
            self.crops = [c for d in found.values() for c in d[1]]
            return found

        def rereading(engine, pictures, boxes, texts, scores):
            self.reread(engine, texts, scores)
            return glyphs(engine, pictures, boxes, texts, scores)

        ocr_batched._detect, ocr_batched.reread_glyphs = detecting, rereading
        return self

    def __exit__(self, *exc):
        ocr_batched._detect, ocr_batched.reread_glyphs = self.shipped

    def reread(self, engine, texts: list, scores: list) -> None:
        todo = [(k, clean_crop(self.crops[k])) for k, score in enumerate(scores) if score < self.below]
        todo = [(k, clean) for k, clean in todo if clean is not None]
        if not todo:
            return
        again, confidence, _ = ocr_batched.ocr_steps.recognise(engine, [clean for _, clean in todo])
        for (k, _), text, score in zip(todo, again, confidence):
            if score > scores[k] and str(text).strip() and (self.rule == "surer" or _more_marks(str(texts[k]), str(text))):
                texts[k], scores[k] = text, score


def read_split(split: str, n: int, seed: int, ink: float, cache: Path | None, rule: str = "surer") -> list[dict]:
    """The ladders' OCR results with lines below `ink` read again clean, per case {variant: OcrResult} beside the case's facts."""
    kept = cache / f"ink-{split}-{n}-{seed}-{ink:g}{'' if rule == 'surer' or not ink else '-' + rule}.pickle" if cache else None
    with InkReread(ink, rule):
        return read_ladders(split, n, seed, Scorer(), kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["stripes", "tuning", "hard", "photo", "coins"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 30, 40, 40, 15], help="posters per split")
    parser.add_argument("--values", type=float, nargs="+", default=[0.0, 1.01], help="re-read lines below this confidence (0: off)")
    parser.add_argument("--rule", choices=("surer", "marks"), default="surer",
                        help="surer: the clean reading wherever the recogniser is surer; marks: only where it adds marks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="a folder for the readings (pickles), read back if there")
    args = parser.parse_args()
    scorer = Scorer()
    for split, n in zip(args.splits, args.sizes):
        reference: list[dict] = []
        for ink in args.values:
            rows = score_reads(read_split(split, n, args.seed, ink, args.cache, args.rule), scorer)
            for group, scripts in GROUPS.items():
                part = [s for s in rows if s["script"] in scripts]
                measures = ", ".join(f"{key} {v:.3f}" for key, v in ladder_measures(part).items())
                repeat = [s for s in part if s["repeated"]]
                lost = sum((s["correct"] or 0) > (s["missing"] or 0) for s in repeat)
                exact = sum((s["correct"] or 0) >= 1.0 for s in part)
                print(f"{split:7s} {group:17s} n={len(part):3d} below {ink:<5g}: {measures}, correct > repeat lost "
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
