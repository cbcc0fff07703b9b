"""The OCR stage's second reading of each line (ocr_second_reading): which letters become alternatives, the view it
reads, and that TR takes such a letter only where the asked text has it."""
from __future__ import annotations

import numpy as np
import pytest

from vistar.api import OcrLine, OcrResult
from vistar.features import ocr_steps
from vistar.features.ocr_second_reading import SHARE, STRETCH, TRIM, letters_read_otherwise, read_again, stretched


def test_letters_read_otherwise_are_the_substituted_ones_indexed_into_the_first_reading():
    assert letters_read_otherwise("ges", "gęś") == ((1, "ę", SHARE), (2, "ś", SHARE))
    assert letters_read_otherwise("Ko SALE", "Kø SALE") == ((1, "ø", SHARE),)
    assert letters_read_otherwise("same", "same") == ()


def test_a_letter_only_one_reading_has_or_a_space_is_no_alternative():
    assert letters_read_otherwise("GRAND OPENING", "GRANDOPENING") == ()     # a space lost: detection, not a letter
    assert letters_read_otherwise("aerø", "ærø") == ()                        # two letters read as one
    assert letters_read_otherwise("CAFE", "CAFE 1") == ()                     # an extra word
    assert letters_read_otherwise("a b c", "a bc") == ()                      # ... wherever it is
    assert letters_read_otherwise("Ko aerø", "Kø ærø") == ((1, "ø", SHARE),)  # the run of another length only


def test_the_view_is_trimmed_top_and_bottom_and_stretched():
    crop = np.zeros((50, 100, 3), np.uint8)
    crop[:4] = 255                       # rows inside the trimmed band
    crop[-4:] = 255
    view = stretched(crop)
    cut = int(50 * TRIM)
    assert view.shape == (50 - 2 * cut, round(100 * STRETCH), 3)
    assert view.max() == 0               # the white rows were cut off
    tiny = np.zeros((5, 3, 3), np.uint8)  # too low to trim: only stretched
    assert stretched(tiny).shape == (5, round(3 * STRETCH), 3)


def test_read_again_adds_the_second_readings_letters_to_the_first_readings_alternatives(monkeypatch):
    first = ocr_steps.Reading("ges Kraków")
    first.alternatives = ((4, "l", 0.4),)
    seen = []

    def recognise(engine, crops):
        seen.extend(c.shape for c in crops)
        return ["gęś Krakow", "SALE"], [0.9, 0.99], [(), ()]

    monkeypatch.setattr(ocr_steps, "recognise", recognise)
    crops = [np.zeros((20, 80, 3), np.uint8), np.zeros((20, 40, 3), np.uint8)]
    texts = read_again(None, crops, [first, "SALE"])
    assert [str(t) for t in texts] == ["ges Kraków", "SALE"]                 # the first reading is kept as read
    assert texts[0].alternatives == ((4, "l", 0.4), (1, "ę", SHARE), (2, "ś", SHARE), (8, "o", SHARE))
    assert texts[1] == "SALE" and not getattr(texts[1], "alternatives", ())
    assert seen == [stretched(c).shape for c in crops]                        # one call, the stretched views
    monkeypatch.setattr(ocr_steps, "recognise", lambda *a: pytest.fail("recogniser called"))
    assert read_again(None, [], []) == []


def line(text: str, alternatives=()) -> OcrLine:
    return OcrLine(text, 0.95, ((10.0, 10.0), (200.0, 10.0), (200.0, 40.0), (10.0, 40.0)), alternatives)


@pytest.mark.parametrize(("asked", "score"), [("Gęś Kraków", 1.0), ("Ges Kraków", 1.0)])
def test_tr_takes_the_second_readings_letter_only_where_the_asked_text_has_it(asked, score):
    from vistar.validity.tr import Scorer

    read = "ges Kraków"
    ocr = OcrResult((line(read, letters_read_otherwise(read, "gęś Kraków")),), 400, 100)
    scorer = Scorer()
    result = scorer.score(ocr, asked)
    assert result.score == pytest.approx(score)
    # a render that drew "Ges" for "Gęś" is read "ges" by both readings: no alternative, charged (two accents)
    plain = scorer.score(OcrResult((line(read),), 400, 100), "Gęś Kraków").score
    assert plain < 0.95


@pytest.mark.slow
def test_a_tuning_poster_whose_first_reading_lost_marks_gets_them_from_the_second():
    # tuning ladder 9 (seed 0), the render missing a word: `Příliš` read `prílis` (`ř` and `š` lost) by the
    # first reading alone, `příliš` with the second reading's letters taken (docs/metrics/tr_reading.md)
    from vistar.features.ocr import OcrSettings, RapidOcrBackend
    from vistar.validity.tr import TUNING, Scorer, ladder_cases

    case = ladder_cases(10, 0, TUNING)[9]
    assert case["expected"] == "Chléb Čaj Dům Kůň Dům Kůň Sýr Příliš"
    image = np.asarray(case["images"]["missing"])
    scorer = Scorer()
    scored = {}
    for second in (False, True):
        lines = RapidOcrBackend(OcrSettings(second_reading=second))(image)
        scored[second] = scorer.score(OcrResult(tuple(lines), image.shape[1], image.shape[0]), case["expected"])
    assert "prílis" in scored[False].details["recognised"]
    assert "příliš" in scored[True].details["recognised"] and {"r→ř", "s→š"} <= set(scored[True].details["read_as_alternative"])
    assert scored[True].score > scored[False].score
