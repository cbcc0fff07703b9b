"""The OCR stage's second reading of each line (ocr_second_reading): which letters become alternatives, the view it
reads, and that TR takes such a letter only where the asked text has it."""
from __future__ import annotations

import numpy as np
import pytest

from vistar.api import OcrLine, OcrResult
from vistar.features import ocr_steps
from vistar.features.ocr_second_reading import SHARE, STRETCH, TRIM, base_letter, letters_read_otherwise, read_again, stretched


def test_letters_read_otherwise_are_the_first_readings_letters_with_a_mark():
    assert letters_read_otherwise("ges", "gęś") == ((1, "ę", SHARE), (2, "ś", SHARE))
    assert letters_read_otherwise("Ko SALE", "Kø SALE") == ((1, "ø", SHARE),)  # a stroke is a mark too
    assert letters_read_otherwise("zazolc", "zażółć") == ((2, "ż", SHARE), (3, "ó", SHARE), (4, "ł", SHARE), (5, "ć", SHARE))
    assert letters_read_otherwise("ç", "ç") == () and letters_read_otherwise("same", "same") == ()


def test_base_letters_come_from_the_letters_names():
    assert [base_letter(c) for c in "ęøłÅǿİ"] == list("eolAoI")
    assert [base_letter(c) for c in "eıæþ东€"] == list("eıæþ东€")             # no mark in the name: its own base


def test_a_letter_only_one_reading_has_or_a_space_is_no_alternative():
    assert letters_read_otherwise("GRAND OPENING", "GRANDOPENING") == ()     # a space lost: detection, not a letter
    assert letters_read_otherwise("aerø", "ærø") == ()                        # two letters read as one
    assert letters_read_otherwise("CAFE", "CAFE 1") == ()                     # an extra word
    assert letters_read_otherwise("a b c", "a bc") == ()                      # ... wherever it is
    assert letters_read_otherwise("Ko aerø", "Kø ærø") == ((1, "ø", SHARE),)  # the run of another length only


def test_the_second_reading_offers_nothing_but_a_mark_added():
    assert letters_read_otherwise("Kraków", "Krakow") == ()                   # a mark taken away
    assert letters_read_otherwise("Krakòw", "Kraków") == ()                   # another mark
    assert letters_read_otherwise("HELL0", "HELLO") == ()                     # another letter ...
    assert letters_read_otherwise("Hcllo", "Hello") == ()
    assert letters_read_otherwise("K0 SALE", "Kø SALE") == ()                 # ... even a marked one
    assert letters_read_otherwise("zażótć", "zażółć") == ()                   # `t` is not `ł` without its stroke
    assert letters_read_otherwise("Istanbul", "Istanbuı") == ()               # a letter with no mark
    assert letters_read_otherwise("东京", "东亰") == ()


def test_the_view_is_trimmed_top_and_bottom_and_stretched():
    crop = np.zeros((50, 100, 3), np.uint8)
    crop[:4] = 255                       # rows inside the trimmed band
    crop[-4:] = 255
    view = stretched(crop)
    cut = int(50 * TRIM)
    assert view.shape == (50 - 2 * cut, round(100 * STRETCH), 3)
    assert view.max() == 0               # the white rows were cut off
    low = np.zeros((12, 3, 3), np.uint8)  # 8 % of 12 rows rounds down to none: only stretched
    assert stretched(low).shape == (12, round(3 * STRETCH), 3)


def test_read_again_adds_the_second_readings_letters_to_the_first_readings_alternatives(monkeypatch):
    first = ocr_steps.Reading("ges Kraków")
    first.alternatives = ((4, "l", 0.4),)
    seen = []

    def recognise(engine, crops, turned=False):
        assert turned                    # the crops come turned upright already: not classified a second time
        seen.extend(c.shape for c in crops)
        return ["gęś Krakow", "SALĘ"], [0.9, 0.99], [(), ()]   # `Krakow`: a mark lost, nothing offered

    monkeypatch.setattr(ocr_steps, "recognise", recognise)
    crops = [np.zeros((20, 80, 3), np.uint8), np.zeros((20, 40, 3), np.uint8)]
    texts = read_again(None, crops, [first, "SALE"])
    assert [str(t) for t in texts] == ["ges Kraków", "SALE"]                 # the first reading is kept as read
    assert texts[0].alternatives == ((4, "l", 0.4), (1, "ę", SHARE), (2, "ś", SHARE))   # not `o` for `ó`
    assert texts[1] == "SALE" and texts[1].alternatives == ((3, "Ę", SHARE),)
    assert seen == [stretched(c).shape for c in crops]                        # one call, the stretched views
    monkeypatch.setattr(ocr_steps, "recognise", lambda *a: pytest.fail("recogniser called"))
    assert read_again(None, [], []) == []


def line(text: str, alternatives=()) -> OcrLine:
    return OcrLine(text, 0.95, ((10.0, 10.0), (200.0, 10.0), (200.0, 40.0), (10.0, 40.0)), alternatives)


def test_tr_takes_the_second_readings_letter_only_where_the_asked_text_has_it():
    from vistar.validity.tr import Scorer

    read, scorer = "ges Kraków", Scorer()
    taken = OcrResult((line(read, letters_read_otherwise(read, "gęś Kraków")),), 400, 100)
    plain = OcrResult((line(read),), 400, 100)
    assert scorer.score(taken, "Gęś Kraków").score == pytest.approx(1.0)
    # the same reading without the alternatives is charged two lost marks
    assert scorer.score(plain, "Gęś Kraków").score < 0.95
    # asked `Gas`: `ę` is not the asked letter, so the alternatives change nothing (`e` for `a` stays charged)
    charged = scorer.score(plain, "Gas Kraków").score
    assert charged < 1.0 and scorer.score(taken, "Gas Kraków").score == pytest.approx(charged)
    assert not scorer.score(taken, "Gas Kraków").details["read_as_alternative"]


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


def test_crops_turned_once_are_not_classified_again():
    # with the orientation classifier on, `_look` turns the crops once (`upright`) and both readings get them as
    # turned: a second classification could turn one view and not the other
    from types import SimpleNamespace

    classified, read = [], []

    def cls_and_rotate(crops):
        classified.append(len(crops))
        return [c[::-1, ::-1] for c in crops], None

    def rec_model(rec_input):
        read.append([c.copy() for c in rec_input.img])
        return SimpleNamespace(txts=["A"] * len(rec_input.img), scores=[1.0] * len(rec_input.img),
                               word_results=[()] * len(rec_input.img))

    engine = SimpleNamespace(use_cls=True, cls_and_rotate=cls_and_rotate, _load_rec_model=lambda: rec_model,
                             return_word_box=False)
    crops = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3)]
    turned = ocr_steps.upright(engine, crops)
    assert classified == [1] and np.array_equal(turned[0], crops[0][::-1, ::-1])
    ocr_steps.recognise(engine, turned, turned=True)
    assert classified == [1] and np.array_equal(read[-1][0], turned[0])     # read as turned, not turned back
    ocr_steps.recognise(engine, crops)
    assert classified == [1, 1] and np.array_equal(read[-1][0], turned[0])  # the default still classifies


def test_a_look_turns_its_crops_once_and_reads_them_twice_as_turned(monkeypatch):
    # through the real RapidOCR on a rendered line: `_look` classifies once (`upright`), then both readings get
    # the turned crops (`turned=True`), the second stretched
    from vistar.features import ocr_batched
    from vistar.features.ocr import OcrSettings, RapidOcrBackend
    from vistar.synth.text import render_text

    calls, turned_once = [], []
    recognise, upright = ocr_steps.recognise, ocr_steps.upright

    def recording(engine, crops, turned=False):
        calls.append((turned, [c.shape for c in crops]))
        return recognise(engine, crops, turned=turned)

    monkeypatch.setattr(ocr_steps, "recognise", recording)
    monkeypatch.setattr(ocr_steps, "upright", lambda engine, crops: turned_once.append(len(crops)) or upright(engine, crops))
    backend = RapidOcrBackend(OcrSettings(second_look=float("inf"), stripes_when_sure=False))
    lines = ocr_batched._look(backend, [np.asarray(render_text("FRESH COFFEE", size=(480, 120), font_size=40))])[0][0].lines
    assert [ln.text for ln in lines] == ["FRESH COFFEE"]
    assert turned_once == [1] and [turned for turned, _ in calls] == [True, True]
    assert calls[1][1] == [stretched(np.zeros(shape, np.uint8)).shape for shape in calls[0][1]]
