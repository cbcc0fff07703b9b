"""A second reading of every text line, its crop trimmed and stretched: the marks the first reading loses.

The recogniser reads a line crop resized to 48 px high, and over a photo or stripes it drops a small mark it reads
elsewhere (`Gęś` read `ges`, `Kø` read `ko`, `Řezník` read `reznik`) with no close rival in its posterior, so TR's
recogniser doubt (metrics/text_doubt) had nothing to choose. The same crop with 8 % of its height trimmed off top
and bottom and drawn 1.3 times as wide puts the letters over more of the recogniser's rows and columns (more CTC
frames per letter) and reads many of those marks: on tuning carrier posters the letters with a diacritic are read
as themselves in 0.808 of the first reading's readings, 0.834 of this view's and 0.858 of either's
(docs/metrics/tr_reading.md, A second reading). Each reads letters the other misses, so it does not replace the
first, and it may only add what it is for, a mark: where the two readings differ in a run of letters as long, a
letter the second reads as the first reading's letter with a mark (`ę` where the first read `e`, `ø` for `o`, `ł`
for `l`: `base_letter`) becomes an alternative of it (share 1: the recogniser read it), which TR takes only where
the asked text has that letter. Nothing else is offered: not a mark taken away (`Kraków` drawn for `Krakow`),
another mark (`ò` drawn for `ó`), another letter (`0` drawn for `ø`, `t` read for `ł`) or a letter with no
mark (`ı`, `东`).
"""
from __future__ import annotations

import unicodedata

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


def base_letter(char: str) -> str:
    """CHAR without its marks, by its Unicode name: `ę` (E WITH OGONEK) -> `e`, `ø` and `ł` (WITH STROKE) -> `o`, `l`,
    `Å` -> `A`; a letter with no mark in its name (`e`, `ı`, `æ`, `东`) is its own base."""
    name = unicodedata.name(char, "")
    if " WITH " not in name:
        return char
    try:
        return unicodedata.lookup(name.split(" WITH ")[0])
    except KeyError:
        return char


def letters_read_otherwise(first: str, second: str) -> tuple[tuple[int, str, float], ...]:
    """(index into FIRST, SECOND's letter, SHARE) for each letter of SECOND that is FIRST's letter there with a mark
    (`base_letter`), in a run of edits of a least-cost alignment of the two readings that puts as many letters in
    SECOND's place as it takes from FIRST (`ges` / `gęś`). A run of another length (`ae` / `æ`, a space lost, a
    letter only one reading has) is left out: that is not one letter read as another; so is every other
    substitution (`o` for `ó`, `ò` for `ó`, `O` for `0`, `ł` for `t`): the second reading adds marks, it does not
    take them away, swap them or mend other misreadings."""
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
                    if second[j] != first[i] and base_letter(second[j]) == first[i]]
    return tuple(out)


def read_again(engine, crops: list[np.ndarray], texts: list) -> list:
    """TEXTS (the first readings of CROPS, already turned upright: `ocr_steps.upright`) with the second reading's
    marked letters (`letters_read_otherwise`) added to their alternatives (`ocr_steps.Reading`); one recogniser call for all of them."""
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
