"""The detector's later looks over stripes — at the text's strokes alone, and at the image less its stripes —
measured on the TR tuning ladders (docs/metrics/tr_reading.md, Text over stripes).

    python benchmarks/bench_tr_clean_look.py [--splits fine stripes tuning hard photo coins]
                                             [--sizes 60 60 30 40 40 15] [--looks 7:0.1 7:0.1:0.4 7:0.1:0.4:sure]
                                             [--seed 0]
                                             [--cache DIR]

Over diagonal stripes the detector's probability map is patchy: words are cut and lines lost. After the OCR
stage's grey second look, the detector can look at the text's strokes alone (vistar/features/ocr_views.py,
`stroke_view`): `features.ocr.second_look_strokes` is the width of the disc that lifts them off the stripes (0: no
strokes look) and `second_look_max_ink` the share of stroke pixels above which the image is a photo or a fine
texture and gets no strokes look. Then at the image with its stripes replaced by one colour (`stripe_view`):
`second_look_stripes` is the share of edge strength along one direction an image needs for it (0: no stripes
look), and `stripes_when_sure` whether it also runs where the first look was sure (a fourth field `sure`; the
shipped stage is `7:0.1:0.4:sure`). Each `--looks` entry is STROKES:MAX_INK[:STRIPES[:sure]]; the first is the
reference.

Each split's ladders (vistar.validity.tr_tuning.SPLITS) are read once per entry and scored by the shipped TR.
Printed per split, script group and entry: the validity measures, correct > repeat lost and the renders whose TR
rose and fell against the reference, then each moved correct render with both readings. `--cache` keeps the
readings (pickles) and reads them back.
"""
from __future__ import annotations

from pathlib import Path

from tr_ladder_report import group_report, ladder_parser, moved_correct, ocr_scorer, read_ladders, rule_off, score_reads, up_down

from vistar.validity.tr import GROUPS, Scorer


def scorer_with(strokes: int, max_ink: float, stripes: float = 0.0, when_sure: bool = False) -> Scorer:
    """The shipped OCR and TR, the strokes look set to STROKES and MAX_INK, the stripes look to STRIPES and
    WHEN_SURE (features.ocr)."""
    return ocr_scorer(second_look_strokes=strokes, second_look_max_ink=max_ink, second_look_stripes=stripes,
                      stripes_when_sure=when_sure)


def read_split(split: str, n: int, seed: int, look: str, cache: Path | None) -> list[dict]:
    """The ladders' OCR results with LOOK's settings (STROKES:MAX_INK[:STRIPES[:sure]]), per case {variant:
    OcrResult} beside its facts."""
    parts = look.split(":") + ["0", ""]
    strokes, max_ink, stripes, sure = int(parts[0]), float(parts[1]), float(parts[2]), parts[3] == "sure"
    name = f"{strokes}-{max_ink:g}{f'-{stripes:g}' if stripes else ''}{'-sure' if sure else ''}"
    kept = cache / f"clean-{split}-{n}-{seed}-{name}.pickle" if cache else None
    return read_ladders(split, n, seed, scorer_with(strokes, max_ink, stripes, sure), kept)


def main() -> None:
    parser = ladder_parser(__doc__)
    parser.set_defaults(splits=["fine", "stripes", "tuning", "hard", "photo", "coins"], sizes=[60, 60, 30, 40, 40, 15])
    parser.add_argument("--looks", nargs="+", default=["7:0.1", "7:0.1:0.4", "7:0.1:0.4:sure"],
                        help="second_look_strokes:second_look_max_ink[:second_look_stripes[:sure]], the first the "
                             "reference (strokes 0: no strokes look; stripes 0 or absent: no stripes look; sure: "
                             "stripes_when_sure)")
    args = parser.parse_args()
    scorer = Scorer()
    for split, n in zip(args.splits, args.sizes):
        off: dict[tuple[int, str], float] = {}
        reference: list[dict] = []
        for look in args.looks:
            scored = score_reads(read_split(split, n, args.seed, look, args.cache), scorer)
            for group, scripts in GROUPS.items():
                rows, measures, moves, lost = group_report(scored, scripts, off)
                print(f"{split:7s} {group:17s} n={len(rows):3d} strokes {look:6s}: {measures}, correct > repeat lost {lost}, "
                      f"{up_down(moves)}", flush=True)
            if not reference:
                reference, off = scored, rule_off(scored)
                continue
            for line in moved_correct(reference, scored):
                print(line)


if __name__ == "__main__":
    main()
