"""Does the recogniser lose accents because the detector's boxes clip them? The tuning ladders read with each
text box padded vertically before it is cropped for the recogniser (docs/metrics/tr.md, Crop padding).

    python benchmarks/bench_tr_crop_pad.py [--splits tuning hard photo coins] [--sizes 60 80 80 30]
                                           [--pads 0 0.1 0.2 0.3] [--unclips 1.8 2.0] [--seed 0]
                                           [--crops DIR] [--look] [--ink]

Each box (RapidOCR's DB detector, unclip ratio 1.6) is stretched by `pad` × its height above its top edge and
below its bottom edge (along the box's own vertical, so rotated lines stay rotated); the reported box is not
changed, only the crop the recogniser reads. `--unclips`: the detector's own unclip ratio raised instead (at pad 0;
its boxes grow on every side and are reported grown). Printed per split, script group and variant: the ladder
measures (correct > typo, typo > missing word, exact render TR >= 0.95), correct > repeat lost, and the correct
renders whose only errors are lost or changed marks (read equals expected with accents stripped, not with them),
how many of those score below 0.95, and the words they misread.

`--look`: the correct renders of Latin-diacritics posters only (no ladder). `--crops DIR`: for the first variant,
PNGs of the crops (at each pad, top to bottom) of lines whose reading lost a mark, to see whether the mark is inside
the crop. `--ink`: no posters; the share of a plainly rendered word's ink outside the boxes at each pad (`ink_outside`).
"""
from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np

from vistar.metrics.text_similarity import normalize_text, strip_accents
from vistar.validity.tr import GROUPS, Scorer, ladder_cases, ladder_measures, score_ladder
from vistar.validity.tr_tuning import SPLITS


def pad_boxes(boxes: np.ndarray, pad: float) -> np.ndarray:
    """Quadrilaterals (top-left, top-right, bottom-right, bottom-left) stretched by `pad` × their height over
    the top edge and under the bottom one, each side along its own left/right edge."""
    boxes = np.asarray(boxes, np.float32).copy()
    if pad <= 0 or not len(boxes):
        return boxes
    left, right = boxes[:, 3] - boxes[:, 0], boxes[:, 2] - boxes[:, 1]
    boxes[:, 0] -= pad * left
    boxes[:, 3] += pad * left
    boxes[:, 1] -= pad * right
    boxes[:, 2] += pad * right
    return boxes


def padded_scorer(pad: float, unclip: float | None = None) -> Scorer:
    """The shipped Scorer whose OCR engine crops every box padded by `pad` (the reported boxes stay as found),
    its detector unclipping boxes by `unclip` where given."""
    scorer = Scorer()
    scorer.ocr(np.full((64, 64, 3), 255, np.uint8))   # loads the backend (each Scorer has its own)
    [backend] = [m for key, m in scorer.ctx.cache.items() if key.startswith("ocr:")]
    if unclip is not None:
        backend.engine._load_det_model().postprocess_op.unclip_ratio = unclip
    crop = type(backend.engine).crop_text_regions
    backend.engine.crop_text_regions = lambda img, boxes: crop(backend.engine, img, pad_boxes(boxes, pad))
    return scorer


def mark_errors(read: str | None, expected: str) -> list[tuple[str, str]]:
    """(expected word, read word) pairs that differ only in their marks, when that is the reading's only error."""
    read, expected = normalize_text(read or ""), normalize_text(expected)
    if read == expected or strip_accents(read) != strip_accents(expected):
        return []
    return [(e, r) for e, r in zip(expected.split(), read.split()) if e != r]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["tuning", "hard", "photo", "coins"], choices=sorted(SPLITS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 80, 80, 30], help="posters per split")
    parser.add_argument("--pads", type=float, nargs="*", default=[0.0, 0.1, 0.2, 0.3])
    parser.add_argument("--unclips", type=float, nargs="*", default=[], help="detector unclip ratios (RapidOCR: 1.6)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--look", action="store_true", help="correct renders of Latin-diacritics posters only")
    parser.add_argument("--crops", type=Path, help="a folder for crops of lines whose marks were lost")
    parser.add_argument("--ink", action="store_true", help="only the ink-outside-the-box count on plain renders")
    args = parser.parse_args()
    if args.ink:
        return ink_outside(args.pads)
    scorers = {f"pad {pad:<4g}": padded_scorer(pad) for pad in args.pads}
    scorers.update({f"unclip {unclip:g}": padded_scorer(0.0, unclip) for unclip in args.unclips})
    for split, n in zip(args.splits, args.sizes):
        cases = ladder_cases(n, args.seed, SPLITS[split])
        if args.look:
            cases = [{**c, "images": {"correct": c["images"]["correct"]}} for c in cases if c["script"] != "latin"]
        for variant, scorer in scorers.items():
            scored = score_ladder(cases, scorer)
            for group, scripts in GROUPS.items():
                part = [s for s in scored if s["script"] in scripts]
                if not part:
                    continue
                lost = [pair for s in part for pair in mark_errors(s["read"], s["expected"])]
                only = [s for s in part if mark_errors(s["read"], s["expected"])]
                short = sum((s["correct"] or 0) < 0.95 for s in only)
                exact = np.mean([(s["correct"] or 0) >= 0.95 for s in part])
                measures = (f"exact render TR>=0.95 {exact:.3f}" if args.look else
                            ", ".join(f"{k} {v:.3f}" for k, v in ladder_measures(part).items()))
                repeat = [s for s in part if s["repeated"]]
                kept = "" if args.look or not repeat else \
                    f", correct > repeat lost {sum((s['correct'] or 0) > (s['missing'] or 0) for s in repeat)}/{len(repeat)}"
                top = ", ".join(f"{e}→{r} {k}" for (e, r), k in Counter(lost).most_common(6))
                print(f"{split:7s} {group:17s} n={len(part):3d} {variant:10s}: {measures}{kept}; "
                      f"marks-only errors {len(only)}, {short} of them below 0.95 ({top})", flush=True)
            if args.crops and variant == next(iter(scorers)):
                save_crops(scored, cases, args.crops / split, args.pads or [0.0])


MARKED = ("ȚȘĄĘÇ ŢŞĮŲ", "ÅÖŽŘÉ ÜÂĚŮ")   # capitals whose marks reach furthest below and above


def ink_outside(pads: list[float]) -> None:
    """Every tuning-vocabulary word with marks and two lines of capitals with marks above and below (MARKED), alone
    on a plain 512² canvas, in every other poster font at 18 and 30 px: the share of its ink (pixels off the
    background) outside the detected boxes padded by each pad; a mark the box clips shows here as ink outside, and
    a word not detected at all as all of its ink. Also the unpadded box's room above and below the ink."""
    import cv2
    from PIL import Image

    from vistar.synth.text import poster_fonts, render_poster
    from vistar.validity.tr import DIACRITIC_LANGUAGES, TUNING, WORDS

    scorer, words = Scorer(), [*MARKED, *(w for lang in DIACRITIC_LANGUAGES for w in WORDS[lang][TUNING.vocabulary::2])]
    outside: dict[float, list[float]] = {pad: [] for pad in pads}
    worst: dict[float, Counter] = {pad: Counter() for pad in pads}
    margins: list[tuple[float, float, str]] = []
    for font in poster_fonts(ascii_ok=False)[::2]:
        for size in (18, 30):
            for word in words:
                base = Image.new("RGB", (512, 512), (235, 235, 235))
                image = np.asarray(render_poster(base, [word], [], font=font, font_size=size, ink=(20, 20, 20), stroke=1))
                ink = np.abs(image.astype(int) - 235).max(2) > 40
                lines = scorer.ocr(image).lines
                if lines:   # the gap between the ink and the box's top and bottom, in box heights (a level line)
                    ys = np.concatenate([np.asarray(line.box)[:, 1] for line in lines])
                    rows = np.flatnonzero(ink.any(1))
                    margins.append(((rows[0] - ys.min()) / np.ptp(ys), (ys.max() - rows[-1]) / np.ptp(ys), word))
                for pad in pads:
                    inside = np.zeros(ink.shape, np.uint8)
                    for line in lines:
                        box = pad_boxes(np.asarray(line.box, np.float32)[None], pad)[0]
                        cv2.fillPoly(inside, [np.round(box).astype(np.int32)], 1)
                    share = float((ink & (inside == 0)).sum() / max(ink.sum(), 1))
                    outside[pad].append(share)
                    if share > 0.005:
                        worst[pad][word] += 1
    for side, k in (("above the ink", 0), ("below the ink", 1)):
        least = min(margins, key=lambda m: m[k])
        print(f"unpadded box {side}: median {np.median([m[k] for m in margins]):.2f}, least {least[k]:.2f} box heights "
              f"({least[2]!r})")
    for pad in pads:
        shares = np.array(outside[pad])
        print(f"pad {pad:<4g}: {len(shares)} renders, ink outside the boxes: none on {np.mean(shares == 0):.1%}, "
              f"> 0.5 % of the ink on {np.mean(shares > 0.005):.1%}, mean {shares.mean():.2%}; words: "
              + ", ".join(f"{w} {k}" for w, k in worst[pad].most_common(8)), flush=True)


def save_crops(scored: list[dict], cases: list[dict], folder: Path, pads: list[float]) -> None:
    """Each line whose reading lost a mark of its expected word, cropped from the correct render at every pad."""
    from PIL import Image
    from rapidocr.utils.process_img import get_rotate_crop_image

    folder.mkdir(parents=True, exist_ok=True)
    for k, (s, case) in enumerate(zip(scored, cases)):
        lost = {r for _, r in mark_errors(s["read"], s["expected"])}
        image = np.asarray(case["images"]["correct"].convert("RGB"))
        for j, line in enumerate(s["ocr"]["correct"].lines):
            if not lost & set(normalize_text(line.text).split()):
                continue
            box = np.asarray(line.box, np.float32)[None]
            crops = [get_rotate_crop_image(image, pad_boxes(box, pad)[0]) for pad in pads]
            width = max(c.shape[1] for c in crops)
            sheet = np.full((sum(c.shape[0] + 4 for c in crops), width, 3), 255, np.uint8)
            y = 0
            for c in crops:
                sheet[y:y + c.shape[0], :c.shape[1]] = c
                y += c.shape[0] + 4
            Image.fromarray(sheet).save(folder / f"{k:03d}-{j}-{strip_accents(normalize_text(line.text))[:20]}.png")


if __name__ == "__main__":
    main()
