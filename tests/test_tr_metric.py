"""The TR metric as a pure function of hand-made OCR lines: reading order, filters, expected-text sources."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from vistar.api import OcrLine, OcrResult
from vistar.api.ocr import text_angle
from vistar.engine.params import metric_params
from vistar.metrics.text_filters import filter_lines
from vistar.metrics.text_layout import reading_order
from vistar.metrics.tr import METRIC
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt, resolved_controls

PARAMS = metric_params(Ontology.load(None), "TR")


def line(text: str, x: float, y: float, w: float = 200, h: float = 40, conf: float = 0.99) -> OcrLine:
    return OcrLine(text, conf, ((x, y), (x + w, y), (x + w, y + h), (x, y + h)))


def ocr(*lines: OcrLine, size: int = 1000) -> OcrResult:
    return OcrResult(tuple(lines), size, size)


def score(lines: OcrResult, controls: dict, **overrides):
    return METRIC.fn({"ocr": lines}, controls, replace(PARAMS, **overrides), None)


def test_reading_order_two_rows_from_shuffled_boxes():
    # row 1: "GRAND" "OPENING" (second box 6 px lower: same row); row 2: "TODAY" "ONLY"; given out of order
    boxes = [line("ONLY", 400, 300), line("OPENING", 400, 106), line("TODAY", 100, 300), line("GRAND", 100, 100)]
    assert [ln.text for ln in reading_order(boxes)] == ["GRAND", "OPENING", "TODAY", "ONLY"]


def test_reading_order_separates_rows_more_than_half_a_line_apart():
    # centres 25 px apart with 40 px lines: a new row even though the boxes overlap vertically
    boxes = [line("B", 0, 125), line("A", 300, 100)]
    assert [ln.text for ln in reading_order(boxes)] == ["A", "B"]
    assert reading_order([]) == []


def test_score_uses_reading_order_not_detector_order():
    shuffled = ocr(line("DAILY", 100, 400), line("COFFEE", 450, 200), line("FRESH", 100, 200))
    result = score(shuffled, {"text": "FRESH COFFEE DAILY"})
    assert result.status == "ok" and result.score == 1.0
    assert [d["text"] for d in result.details["ocr_lines"]] == ["FRESH", "COFFEE", "DAILY"]


def test_confidence_filter():
    lines = ocr(line("HELLO", 100, 100, conf=0.95), line("XQZ", 400, 100, conf=0.2))
    kept, dropped = filter_lines(lines, min_confidence=0.5, min_box_height_frac=0.0)
    assert [ln.text for ln in kept] == ["HELLO"] and dropped == {"low_confidence": 1, "tiny_box": 0, "stray": 0, "glyph": 0, "clutter": 0, "numerals": 0, "nested": 0}
    result = score(lines, {"text": "HELLO"}, min_confidence=0.5)
    assert result.score == 1.0 and result.details["dropped_lines"]["low_confidence"] == 1
    # with the filter off the noise line counts: "hello xqz" vs "hello" → char 5/9, token 1 − 1 extra word / 2
    assert score(lines, {"text": "HELLO"}, min_confidence=0.0).score == pytest.approx(0.5 * 5 / 9 + 0.5 * 0.5)


def test_tiny_box_filter():
    lines = ocr(line("HELLO", 100, 100, h=40), line("ii", 600, 700, h=6))  # 6 px high in a 1000 px image
    kept, dropped = filter_lines(lines, min_confidence=0.0, min_box_height_frac=0.01)
    assert [ln.text for ln in kept] == ["HELLO"] and dropped == {"low_confidence": 0, "tiny_box": 1, "stray": 0, "glyph": 0, "clutter": 0, "numerals": 0, "nested": 0}
    kept, _ = filter_lines(lines, min_confidence=0.0, min_box_height_frac=0.005)
    assert len(kept) == 2


def test_no_text_read_scores_zero():
    result = score(ocr(), {"text": "GRAND OPENING"})
    assert result.status == "ok" and result.score == 0.0
    assert result.details["recognised"] == "" and result.details["ocr_lines"] == []


def test_text_list_joined_in_given_order():
    lines = ocr(line("SUMMER SALE", 100, 100), line("50% OFF", 100, 300))
    assert score(lines, {"text": ["SUMMER SALE", "50% OFF"]}).score == 1.0
    swapped = score(lines, {"text": ["50% OFF", "SUMMER SALE"]})
    assert swapped.details["token"] == 0.0 and swapped.details["char"] < 1.0  # order matters: every word is misplaced


def test_details_hold_sub_scores_and_evidence():
    result = score(ocr(line("GRAND OPENNG", 100, 100, conf=0.876543)), {"text": "GRAND OPENING"})
    d = result.details
    assert (d["char"], d["token"]) == (pytest.approx(12 / 13), pytest.approx(1 - (1 / 7) / 2))
    assert result.score == pytest.approx(0.5 * 12 / 13 + 0.5 * 13 / 14)
    assert d["ocr_lines"] == [{"text": "GRAND OPENNG", "confidence": 0.8765, "box": [[100, 100], [300, 100], [300, 140], [100, 140]]}]


def test_missing_expected_text_is_an_error_row():
    result = score(ocr(line("HELLO", 0, 0)), {})
    assert result.status == "error" and result.score is None and "text=" in result.error


def test_expected_text_derived_from_quoted_span():
    prompt = parse_prompt('[GD|TR] A shop poster that says "GRAND OPENING" in red')
    controls = resolved_controls(prompt, Ontology.load(None))
    assert controls["text"] == "GRAND OPENING"
    assert score(ocr(line("GRAND OPENING", 100, 100)), controls).score == 1.0


def test_explicit_text_wins_over_quoted_span():
    prompt = parse_prompt('[GD|TR] A poster that says "GRAND OPENING" {text="OPEN"}')
    controls = resolved_controls(prompt, Ontology.load(None))
    assert controls["text"] == "OPEN"
    assert score(ocr(line("OPEN", 100, 100)), controls).score == 1.0


def test_text_list_from_the_prompt_language():
    prompt = parse_prompt('[MS|TR] A sale banner {text=["SUMMER SALE", "50% OFF"]}')
    controls = resolved_controls(prompt, Ontology.load(None))
    lines = ocr(line("50% OFF", 100, 300), line("SUMMER SALE", 100, 100))
    result = score(lines, controls)
    assert result.score == 1.0 and result.details["expected"] == "summer sale 50 off"


LATIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzé0123456789 .,!")


@pytest.mark.parametrize("expected, missing", [
    ("ДОБРО", ["Б", "Д", "О", "Р"]),     # Cyrillic O is not Latin O
    ("Café Ж 24", ["Ж"]),                 # one unreadable letter is enough: it can never be read
    ("CAFÉ", []),                          # É counts as readable through é
    ("SALE 50% ★", []),                   # symbols and punctuation are not letters or digits
    ("DONʼT STOP", []),                    # modifier-letter apostrophe: deleted by the normalisation, not a letter
    ("Hawaiʻi", []),                       # the ʻokina likewise
])
def test_text_outside_the_recogniser_alphabet_is_skipped_not_scored(expected, missing):
    read = ocr(line(expected, 10, 10), size=1000)
    result = score(OcrResult(read.lines, 1000, 1000, LATIN), {"text": expected})
    if missing:
        assert result.status == "skipped" and result.score is None and result.details["unreadable"] == missing
        assert all(c in result.error for c in missing)
    else:
        assert result.status == "ok"


def test_unknown_alphabet_leaves_only_the_script_rule():
    # no alphabet to check against: Cyrillic is still not a script TR scores, unless the user adds it
    assert score(ocr(line("ДОБРО", 10, 10)), {"text": "ДОБРО"}).status == "skipped"
    assert score(ocr(line("ДОБРО", 10, 10)), {"text": "ДОБРО"}, scripts=["Latin", "Cyrillic"]).score == 1.0


@pytest.mark.parametrize("invisible", ["\u200b", "\u200e", "\u00ad", "\u2060", "\ufeff"])
def test_invisible_characters_in_the_expected_text_do_not_cost_score(invisible):
    """Zero-width spaces, bidi marks, soft hyphens are never drawn, so never read: a perfect image scores 1."""
    assert score(ocr(line("GRAND OPENING", 10, 10)), {"text": f"GRAND{invisible} OPEN{invisible}ING"}).score == 1.0


def turned(text: str, x: float, y: float, angle: float, w: float = 200, h: float = 40, pivot=(500, 500), conf=0.99) -> OcrLine:
    """A detector box as `line` makes it, turned by `angle` degrees (clockwise on screen, y down) about `pivot`."""
    a, (px, py) = math.radians(angle), pivot
    corners = ((x, y), (x + w, y), (x + w, y + h), (x, y + h))
    return OcrLine(text, conf, tuple((px + (cx - px) * math.cos(a) - (cy - py) * math.sin(a),
                                      py + (cx - px) * math.sin(a) + (cy - py) * math.cos(a)) for cx, cy in corners))


@pytest.mark.parametrize("angle", [-15, -8, 8, 15])
def test_rotated_multi_line_text_is_read_line_by_line(angle):
    # three lines, each split by the detector into two word boxes 240 px apart, 60 px line pitch: turned by 15°
    # the right word of one line sits 31 px above/below its left word, level with the next line's left word
    words = [("GRAND", "OPENING"), ("FRESH", "COFFEE"), ("DAILY", "TODAY")]
    boxes = [turned(word, 280 + 240 * k, 440 + 60 * row, angle) for row, pair in enumerate(words) for k, word in enumerate(pair)]
    assert text_angle(boxes) == pytest.approx(angle)
    expected = [w for pair in words for w in pair]
    assert [ln.text for ln in reading_order(list(reversed(boxes)))] == expected
    result = score(ocr(*boxes), {"text": " ".join(expected)})
    assert result.score == 1.0 and result.details["layout"] == "rows"


def test_axis_aligned_rows_would_interleave_those_lines():
    # the same boxes at 15°, read by their screen y alone (what TR did before): the lines interleave
    boxes = [turned(w, 280 + 240 * k, 440 + 60 * r, 15) for r, p in enumerate([("A1", "A2"), ("B1", "B2")]) for k, w in enumerate(p)]
    by_screen_y = sorted(boxes, key=lambda ln: (ln.bounds[1] + ln.bounds[3]) / 2)
    assert [ln.text for ln in by_screen_y] != ["A1", "A2", "B1", "B2"]
    assert [ln.text for ln in reading_order(boxes)] == ["A1", "A2", "B1", "B2"]


@pytest.mark.parametrize("angle", [0, -12, 12])
def test_title_over_two_columns_is_read_column_by_column(angle):
    title = [turned("SUMMER MARKET", 350, 300, angle, w=300)]
    left = [turned(t, 200, 360 + 60 * k, angle, w=220) for k, t in enumerate(("FRESH BREAD", "LOCAL HONEY", "OPEN LATE"))]
    right = [turned(t, 560, 360 + 60 * k, angle, w=220) for k, t in enumerate(("LIVE MUSIC", "FREE ENTRY", "ALL AGES"))]
    lines = right + title + left
    in_columns = [ln.text for ln in title + left + right]
    assert [ln.text for ln in reading_order(lines, columns=True)] == in_columns
    result = score(ocr(*lines), {"text": " ".join(in_columns)})
    assert result.score == 1.0 and result.details["layout"] == "columns"
    # the same boxes read as a grid, row by row, when that is what the prompt asked for
    rows = ["SUMMER MARKET"] + [t for pair in zip(left, right) for t in (pair[0].text, pair[1].text)]
    result = score(ocr(*lines), {"text": " ".join(rows)})
    assert result.score == 1.0 and result.details["layout"] == "rows"


def test_columns_whose_detector_boxes_nearly_meet_are_still_read_column_by_column():
    # the detector pads each box beyond its ink, so a 2.5-font-size gutter on a poster turned 12° leaves about
    # half a line height between the columns' boxes (16 px at 35 px lines on a validation poster): here 20 px at 40
    title = [turned("SUMMER MARKET", 300, 300, 12, w=300)]
    left = [turned(t, 200, 360 + 60 * k, 12, w=220) for k, t in enumerate(("FRESH BREAD", "LOCAL HONEY"))]
    right = [turned(t, 440, 360 + 60 * k, 12, w=220) for k, t in enumerate(("LIVE MUSIC", "FREE ENTRY"))]
    in_columns = [ln.text for ln in title + left + right]
    result = score(ocr(*right, *title, *left), {"text": " ".join(in_columns)})
    assert result.score == 1.0 and result.details["layout"] == "columns"
    before = score(ocr(*right, *title, *left), {"text": " ".join(in_columns)}, column_gap=0.8)   # TR v11's gap
    assert before.score < 0.9 and before.details["recognised"] == "summer market fresh bread live music local honey free entry"


def test_decorative_glyphs_do_not_count():
    # a ring read as "O" at 0.65 (above the 0.5 line filter) and a star read as "★" beside the text
    lines = ocr(line("OPEN DAILY", 300, 400, w=400), line("O", 100, 100, w=40, conf=0.65), line("★", 800, 800, w=40, conf=0.99))
    result = score(lines, {"text": "OPEN DAILY"})
    assert result.score == 1.0 and result.details["dropped_lines"]["glyph"] == 2
    # a ring sure enough counts (with the clutter rule off: a ring read at 0.65 far from the text is clutter too) ...
    counted = score(lines, {"text": "OPEN DAILY"}, min_glyph_confidence=0.0, clutter_gap=math.inf)
    assert counted.score < 1.0 and counted.details["recognised"] == "o open daily"
    asked = score(lines, {"text": "OPEN DAILY ★"})                              # ... and a symbol asked for is text
    assert asked.score == 1.0 and asked.details["dropped_lines"]["glyph"] == 1
    dollar = ocr(line("SALE 50", 300, 400, w=400), line("$", 800, 400, w=40, conf=0.99))
    wide = score(dollar, {"text": "SALE 50 ＄"})     # asked full-width, read as the $ it folds to: text, not a glyph
    assert wide.score == 1.0 and wide.details["dropped_lines"]["glyph"] == 0


def test_short_words_on_the_text_lines_or_read_surely_are_kept():
    text = line("OPEN DAILY", 300, 400, w=400)
    on_line = line("GO", 300, 450, w=80, conf=0.91)          # 10 px (0.25 line heights) under the text: a word
    sure = line("50", 800, 800, w=60, conf=0.999)            # far from the text but read surely: a word
    ring = line("O", 100, 100, w=40, conf=0.92)              # far and less sure: a ring
    result = score(ocr(text, on_line, sure, ring), {"text": "OPEN DAILY GO 50"})
    assert result.score == 1.0 and result.details["dropped_lines"]["glyph"] == 1
    assert score(ocr(line("GO", 300, 400, w=80, conf=0.6)), {"text": "GO"}).score == 1.0  # no longer line to be off


def test_a_lone_glyph_that_is_a_word_asked_for_is_kept_however_far_it_stands():
    # a closing "I" under a short "UP": its nearest longer line is two lines up (1.2 line heights), and it is read
    # at 0.96, under min_glyph_confidence; it is the word asked for, so no decoration (tuning lone-glyph posters)
    text, up, lone = line("SKATING SHOW", 300, 400, w=400), line("UP", 300, 450, w=80), line("I", 300, 498, w=20, conf=0.96)
    result = score(ocr(text, up, lone), {"text": "SKATING SHOW UP I"})
    assert result.score == 1.0 and result.details["dropped_lines"]["glyph"] == 0
    # not asked for, the same reading stands off the text lines and is dropped as before
    other = score(ocr(text, up, lone), {"text": "SKATING SHOW UP"})
    assert other.score == 1.0 and other.details["dropped_lines"]["glyph"] == 1
    # a one-character word asked for does not shield a reading that only starts like it ("IN" far off, "I" asked)
    far = score(ocr(text, up, line("IN", 300, 498, w=40, conf=0.96)), {"text": "SKATING SHOW UP I"})
    assert far.details["dropped_lines"]["glyph"] == 1
    # nor a second one once the text's "I" is read: a ring far off read "I" at 0.8 is a decoration again
    beside = line("UP I", 300, 450, w=110)
    again = score(ocr(text, beside, line("I", 800, 800, w=20, conf=0.8)), {"text": "SKATING SHOW UP I"})
    assert again.score == 1.0 and again.details["dropped_lines"]["glyph"] == 1
    # two asked, two far off: both kept, the surer first
    two = score(ocr(text, up, lone, line("I", 300, 560, w=20, conf=0.9)), {"text": "SKATING SHOW UP I I"})
    assert two.score == 1.0 and two.details["dropped_lines"]["glyph"] == 0


def test_a_lone_glyph_is_a_word_asked_for_by_its_alternative_too():
    # TR v18: a plain bar the OCR reads `I` with `l` as an alternative (share 1), off the text lines, where `l` is
    # asked: the alternative makes it the word asked for; one below alt_prob, or a letter not asked, does not
    text, up = line("SKATING SHOW", 300, 400, w=400), line("UP", 300, 450, w=80)
    bar = OcrLine("I", 0.8, ((300, 498), (320, 498), (320, 538), (300, 538)), ((0, "l", 1.0),))
    asked = score(ocr(text, up, bar), {"text": "SKATING SHOW UP l"})
    assert asked.score == 1.0 and asked.details["dropped_lines"]["glyph"] == 0 and asked.details["recognised"].endswith(" l")
    unsure = OcrLine("I", 0.8, bar.box, ((0, "l", PARAMS.alt_prob / 2),))
    assert score(ocr(text, up, unsure), {"text": "SKATING SHOW UP l"}).details["dropped_lines"]["glyph"] == 1
    assert score(ocr(text, up, bar), {"text": "SKATING SHOW UP"}).details["dropped_lines"]["glyph"] == 1


def test_one_typo_costs_less_than_one_missing_word():
    expected = "HARBOUR LIGHTS FESTIVAL TONIGHT"
    shown = {"correct": expected, "typo": "HARBOUR LIGHTS FESTIVAI TONIGHT", "missing": "HARBOUR LIGHTS TONIGHT"}
    s = {k: score(ocr(line(v, 100, 100, w=600)), {"text": expected}) for k, v in shown.items()}
    assert s["correct"].score == 1.0 > s["typo"].score > s["missing"].score
    assert s["typo"].details["token"] == pytest.approx(1 - (1 / 8) / 4)    # 1 letter of an 8-letter word, 4 words
    assert s["missing"].details["token"] == pytest.approx(1 - 1 / 4)       # one whole word of 4


def test_a_dropped_repeated_word_costs():
    result = score(ocr(line("BUY ONE GET", 100, 100, w=400)), {"text": "BUY ONE GET ONE"})
    assert result.details["token"] == pytest.approx(3 / 4) and result.score < 0.9


GREEK = frozenset("ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩαβγδεζηθικλμνξοπρστυφχψω") | LATIN


def test_greek_is_reported_not_scored_unless_opted_in():
    expected = "Καλή όρεξη"
    read = OcrResult((line("Καλη ορεξη", 10, 10),), 1000, 1000, GREEK)
    result = score(read, {"text": expected})   # ή, ό are outside the alphabet: named, with their script
    assert result.status == "skipped" and result.details["unreadable"] == ["ή", "ό"] and "Greek ή ό" in result.error
    plain = score(OcrResult((line("ΚΑΛΗ", 10, 10),), 1000, 1000, GREEK), {"text": "ΚΑΛΗ"})  # all in the alphabet
    assert plain.status == "skipped" and plain.details["script_letters"] == {"Greek": ["Α", "Η", "Κ", "Λ"]}
    opted = {"scripts": ["Latin", "Greek"], "fold_accents": True}
    assert score(read, {"text": expected}, **opted).score == 1.0
    assert score(OcrResult((line("Καλη ορεχη", 10, 10),), 1000, 1000, GREEK), {"text": expected}, **opted).score < 1.0
    assert score(OcrResult(read.lines, 1000, 1000, LATIN), {"text": expected}, **opted).status == "skipped"  # no Greek


def test_a_lost_accent_costs_half_a_letter():
    full, lost, wrong = (score(ocr(line(t, 10, 10)), {"text": "Crème Café"}) for t in ("Crème Café", "Creme Café", "Crame Café"))
    assert full.score == 1.0 > lost.score > wrong.score
    assert lost.details["char"] == pytest.approx(1 - 0.5 / 10) and wrong.details["char"] == pytest.approx(1 - 1 / 10)
    assert score(ocr(line("Creme Cafe", 10, 10)), {"text": "Crème Café"}, fold_accents=True).score == 1.0
