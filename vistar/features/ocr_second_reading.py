"""A second reading of every text line, its crop trimmed and stretched: the marks the first reading loses.

The recogniser reads a line crop resized to 48 px high, and over a photo or stripes it drops a small mark it reads
elsewhere (`Gęś` read `ges`, `Kø` read `ko`, `Řezník` read `reznik`) with no close rival in its posterior, so TR's
recogniser doubt (metrics/text_doubt) had nothing to choose. The same crop with 8 % of its height trimmed off top
and bottom and drawn 1.3 times as wide puts the letters over more of the recogniser's rows and columns (more CTC
frames per letter) and reads many of those marks: on tuning carrier posters the letters with a diacritic are read
as themselves in 0.808 of the first reading's readings, 0.834 of this view's and 0.858 of either's
(docs/metrics/tr_reading.md, A second reading). Each reads letters the other misses,
so it does not replace the first, and it may only add what it is for: where the two readings differ in a
run of letters as long, each letter the second reads as a letter outside ASCII (a mark, or a letter of its own such
as `ł`, `ø`) becomes an alternative of the first reading's letter there (share 1: the recogniser read it), which TR
takes only where the asked text has that letter. It never offers a plain letter or a digit, so it cannot take a
mark away (`Kraków` drawn for `Krakow`) or mend a plain misread letter (`HELL0`).
"""
from __future__ import annotations

import numpy as np
from rapidfuzz.distance import Levenshtein

from . import ocr_steps

TRIM = 0.08      # share of the crop's height cut off its top and off its bottom (rounded down: none under 13 px)
STRETCH = 1.3    # how much wider the crop is drawn (cubic), the height unchanged
SHARE = 1.0      # an alternative the second reading read: as likely as the first reading's letter


def stretched(crop: np.ndarray) -> np.ndarray:
    """CROP trimmed by TRIM of its height top and bottom and drawn STRETCH times as wide."""
    import cv2

    height = crop.shape[0]
    cut = int(height * TRIM)
    crop = crop[cut:height - cut]
    return cv2.resize(crop, (max(1, round(crop.shape[1] * STRETCH)), crop.shape[0]), interpolation=cv2.INTER_CUBIC)


def letters_read_otherwise(first: str, second: str) -> tuple[tuple[int, str, float], ...]:
    """(index into FIRST, SECOND's letter, SHARE) for each letter outside ASCII in a run of edits of a least-cost
    alignment of the two readings that puts as many letters in SECOND's place as it takes from FIRST (`ges` /
    `gęś`). A run of another length (`ae` / `æ`, a space lost, a letter only one reading has) is left out: that is
    not one letter read as another; so is a plain letter or digit read in place of another (`o` for `ó`, `O` for
    `0`): the second reading adds marks, it does not take them away or mend other misreadings."""
    out: list[tuple[int, str, float]] = []
    runs: list[list[int]] = []          # [first start, first end, second start, second end] of neighbouring edits
    for op in Levenshtein.opcodes(first, second):
        if op.tag == "equal":
            continue
        if runs and runs[-1][1] == op.src_start and runs[-1][3] == op.dest_start:
            runs[-1][1], runs[-1][3] = op.src_end, op.dest_end
        else:
            runs.append([op.src_start, op.src_end, op.dest_start, op.dest_end])
    for a, b, c, d in runs:
        if b - a == d - c:
            out += [(i, second[j], SHARE) for i, j in zip(range(a, b), range(c, d))
                    if first[i].strip() and second[j].isalpha() and not second[j].isascii()]
    return tuple(out)


def read_again(engine, crops: list[np.ndarray], texts: list) -> list:
    """TEXTS (the first readings of CROPS, already turned upright: `ocr_steps.upright`) with the second reading's
    letters outside ASCII added to their alternatives (`ocr_steps.Reading`); one recogniser call for all of them."""
    if not crops:
        return texts
    again, _, _ = ocr_steps.recognise(engine, [stretched(crop) for crop in crops], turned=True)
    out = []
    for text, other in zip(texts, again):
        extra = letters_read_otherwise(str(text), str(other))
        if not extra:
            out.append(text)
            continue
        reading = ocr_steps.Reading(str(text))
        reading.alternatives = tuple(getattr(text, "alternatives", ())) + extra
        out.append(reading)
    return out
