"""A line the detector ran across a column gutter: where it is offered a cut, where the cut parts lie, and that TR
cuts it only where the reading comes nearer the expected text (hand-made level lines, 30 px high)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from vistar.api import OcrLine, OcrResult
from vistar.engine.params import metric_params
from vistar.metrics.text_gutter import gutter_cuts
from vistar.metrics.tr import METRIC
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(None), "TR")


def line(text: str, x0: float, x1: float, y: float) -> OcrLine:
    return OcrLine(text, 0.99, ((x0, y), (x1, y), (x1, y + 30), (x0, y + 30)))


# the tuning poster: a title, then LIBRARY CLUB (left column) and SKATING (right column) boxed as one line, then
# two rows of two columns with a blank band from x 251 to 318 between them
TITLE = line("WATER LIGHTS SALE", 230, 455, 100)
ACROSS = line("LIBRARY CLUB SKATING", 116, 417, 135)
BELOW = [line("LIBRARY", 116, 213, 170), line("MARKET SHOW LIBRARY", 318, 564, 170),
         line("today free", 115, 251, 205), line("LIGHTS", 318, 405, 205)]
COLUMNS = "WATER LIGHTS SALE LIBRARY CLUB LIBRARY today free SKATING MARKET SHOW LIBRARY LIGHTS"


def score(lines: list[OcrLine], text: str):
    return METRIC.fn({"ocr": OcrResult(tuple(lines), 800, 800)}, {"text": text}, replace(PARAMS), None)


def test_a_line_across_the_band_of_the_rows_beside_it_is_offered_a_cut_at_each_space():
    [(cut, ways)] = gutter_cuts([TITLE, ACROSS, *BELOW], column_gap=0.4)
    assert cut is ACROSS and [(a.text, b.text) for a, b in ways] == [("LIBRARY", "CLUB SKATING"), ("LIBRARY CLUB", "SKATING")]
    left, right = ways[1]
    assert left.box == ((116, 135), (251, 135), (251, 165), (116, 165))    # ends where the band starts
    assert right.box == ((318, 135), (417, 135), (417, 165), (318, 165))   # starts where it ends


def test_no_cut_without_a_band_beside_the_line_or_for_a_line_inside_one_column():
    assert gutter_cuts([TITLE, ACROSS, line("LIBRARY MARKET SHOW", 116, 564, 170)], column_gap=0.4) == []
    [(cut, _)] = gutter_cuts([TITLE, ACROSS, *BELOW], column_gap=0.4)   # MARKET SHOW LIBRARY lies right of the band
    assert cut is ACROSS
    assert gutter_cuts([TITLE, ACROSS, *BELOW], column_gap=4.0) == []    # the widest band beside it: 3.5 line heights


def test_tr_cuts_the_line_where_the_text_reads_in_columns():
    result = score([TITLE, ACROSS, *BELOW], COLUMNS)
    assert result.score == 1.0 and result.details["layout"] == "columns"
    assert result.details["cut_at_gutter"] == ["LIBRARY CLUB|SKATING"]


def test_tr_keeps_the_line_whole_where_the_text_reads_it_across():
    # the same boxes asked for as read across the rows: a cut would only move words out of order
    across = "WATER LIGHTS SALE LIBRARY CLUB SKATING LIBRARY MARKET SHOW LIBRARY today free LIGHTS"
    result = score([TITLE, ACROSS, *BELOW], across)
    assert result.score == pytest.approx(1.0) and "cut_at_gutter" not in result.details


def test_two_lines_across_the_gutter_are_each_cut():
    # a second line run across the same gutter under the columns: each is cut where the other rows show the band
    last = line("SUMMER SALE DAILY", 116, 417, 240)
    text = ("WATER LIGHTS SALE LIBRARY CLUB LIBRARY today free SUMMER SALE "
            "SKATING MARKET SHOW LIBRARY LIGHTS DAILY")
    result = score([TITLE, ACROSS, *BELOW, last], text)
    assert result.score == 1.0 and result.details["cut_at_gutter"] == ["LIBRARY CLUB|SKATING", "SUMMER SALE|DAILY"]


def test_a_seam_read_once_is_still_listed_when_a_line_is_cut_too():
    # the title boxed as "WATER LIGHTS" and "S SALE", its S read twice, over the columns of the test above
    title = [line("WATER LIGHTS", 230, 370, 100), line("S SALE", 360, 455, 100)]
    result = score([*title, ACROSS, *BELOW], COLUMNS)
    assert result.score == 1.0 and result.details["read_once"] == ["WATER LIGHTS|S SALE"]
    assert result.details["cut_at_gutter"] == ["LIBRARY CLUB|SKATING"]
