"""Letters the detector read twice where two boxes overlap: which seams are offered, how they are read once, and
that TR reads one once only where the characters come nearer the expected text (hand-made lines, 20 px letters)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from vistar.api import OcrLine, OcrResult
from vistar.engine.params import metric_params
from vistar.metrics.text_seams import Seam, read_once, repeated_seams
from vistar.metrics.tr import METRIC, tr_score
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(None), "TR")


def word(text: str, x: float, y: float = 100, h: float = 30, alternatives=()) -> OcrLine:
    """A level line 20 px per character starting at x."""
    w = 20 * len(text)
    return OcrLine(text, 0.99, ((x, y), (x + w, y), (x + w, y + h), (x, y + h)), tuple(alternatives))


def score(*lines: OcrLine, text: str):
    return METRIC.fn({"ocr": OcrResult(tuple(lines), 1000, 1000)}, {"text": text}, replace(PARAMS), None)


def test_a_letter_in_the_overlap_of_two_boxes_is_offered_and_read_once():
    # HARBOUR ends at x 240, R CITY starts at 220: its R lies inside HARBOUR's box
    lines = [word("R CITY", 220, alternatives=[(0, "P", 0.4), (2, "G", 0.5)]), word("HARBOUR", 100)]
    assert repeated_seams(lines) == [Seam(left=1, right=0, repeat=1)]
    [once] = read_once(lines, repeated_seams(lines))
    assert once.text == "HARBOUR CITY"
    assert once.box == ((100, 100), (340, 100), (340, 130), (100, 130))   # from HARBOUR's start to R CITY's end
    assert once.alternatives == ((8, "G", 0.5),)   # C moved to 8; the R read twice took its doubt with it


def test_no_seam_without_overlap_or_where_the_repeat_is_longer_than_the_overlap_holds():
    assert repeated_seams([word("HARBOUR", 100), word("R CITY", 250)]) == []     # a 10 px gap
    # "no" "no" whose padded boxes touch by a fifth of a letter: a two-letter repeat needs more than one letter's overlap
    assert repeated_seams([word("no", 100), word("no", 136)]) == []
    assert repeated_seams([word("HARBOUR", 100), word("R CITY", 220, y=160)]) == []   # not in one row


def test_tr_reads_the_seam_once_where_the_text_asks_for_it():
    result = score(word("HARBOUR", 100), word("R CITY", 220), text="HARBOUR CITY")
    assert result.score == 1.0 and result.details["read_once"] == ["HARBOUR|R CITY"]
    assert result.details["recognised"] == "harbour city"
    assert tr_score("HARBOUR R CITY", "HARBOUR CITY", 0.5)["score"] < 0.95   # what it scored as read


def test_two_words_sharing_a_letter_at_overlapping_boxes_stay_two():
    # WATER's padded box runs 14 px into records' (0.7 of a letter) and both have an r there: read once it would
    # be "WATERecords", farther from the text, so the seam is not taken
    lines = [word("WATER", 100), word("records", 186)]
    assert repeated_seams(lines) == [Seam(0, 1, 1)]
    result = score(*lines, text="WATER records")
    assert result.score == 1.0 and "read_once" not in result.details


def test_a_chain_of_seams_is_read_once_seam_by_seam():
    # Piekarnia cut into three overlapping boxes: "Pie" "iek" "ekarnia"
    lines = [word("Pie", 100), word("iek", 130), word("ekarnia", 160)]   # 1.5 letters overlap each
    assert repeated_seams(lines) == [Seam(0, 1, 2), Seam(1, 2, 2)]
    result = score(*lines, text="Piekarnia")
    assert result.details["recognised"] == "piekarnia" and result.score == pytest.approx(1.0)
    assert result.details["read_once"] == ["Pie|iek", "iek|ekarnia"]


def test_a_box_with_no_length_along_the_text_offers_no_seam():
    flat = OcrLine("R", 0.99, ((230, 100), (230, 100), (230, 130), (230, 130)))
    assert repeated_seams([word("HARBOUR", 100), flat]) == []
    assert score(word("HARBOUR", 100), flat, text="HARBOUR").status == "ok"
