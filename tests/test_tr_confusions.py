"""benchmarks/bench_tr_confusions.py measures what it says: the recogniser's letter confusions counted on hand-made
readings, the look-alike table built from counts, and the candidate rule's char distance (half a letter or nothing
for a look-alike) with the orderings it must keep, on a hand-made table."""
from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

from vistar.metrics import text_similarity
from vistar.metrics.tr import tr_score

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_tr_confusions.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_tr_confusions", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readings_count_what_each_letter_with_a_diacritic_is_read_as(bench):
    # one word per shape: read as another letter, as a plain one, dropped, not read at all, read right
    got = bench.readings("Kahvaltı Şehir Kø Žena Smørrebrød", "kahvalt1 sehir k smørrebrød zzzzzz")
    assert got == [("ı", "1"), ("ş", "s"), ("ø", ""), ("ž", None), ("ø", "ø"), ("ø", "ø")]
    assert bench.readings("Blåbær", "blabaer") == [("å", "a"), ("æ", "ae")]   # one letter read as two


def test_lookalikes_need_a_share_enough_readings_and_more_than_an_accent(bench):
    counts = {"ı": Counter({"1": 6, "i": 3, "ı": 1, None: 5}), "ş": Counter({"s": 10}), "ø": Counter({"o": 2, "ø": 8}),
              "þ": Counter({"p": 4})}
    # ı: read 1 in 6 of its 10 aligned readings; ş: only an accent; ø: 0.2 of 10; þ: 4 readings, too few
    assert bench.lookalikes(counts, 0.3) == {"ı": "1"}
    assert bench.lookalikes(counts, 0.2) == {"ı": "1", "ø": "o"}


def test_lookalike_table_in_both_cases_chains_and_cycles(bench):
    assert "kø KØ".translate(bench.lookalike_table({"ø": "o"})) == "ko KO"
    assert "I".translate(bench.lookalike_table({"ı": "1"})) == "I"       # ı's capital is I, i's: never folded to 1
    assert "æøo".translate(bench.lookalike_table({"æ": "ø", "ø": "o"})) == "ooo"   # a chain ends in one glyph
    assert "þp".translate(bench.lookalike_table({"þ": "p", "p": "þ"})) == "pp"     # a cycle goes to one of its letters


@pytest.fixture
def candidate(bench, monkeypatch):
    """TR with the candidate rule (dotless ı read as i, ø read as o, hand-made) at half a letter or free."""
    table = bench.lookalike_table({"ı": "i", "ø": "o"})

    def use(free: bool):
        text_similarity.joined_cost.cache_clear()
        monkeypatch.setattr(text_similarity, "char_distance", bench.candidate_distance(table, free))
        return text_similarity.char_distance
    yield use
    monkeypatch.undo()
    text_similarity.joined_cost.cache_clear()


def test_candidate_half_costs_a_lookalike_like_an_accent_and_keeps_the_orderings(candidate):
    distance = candidate(free=False)
    assert distance("kahvalti", "kahvaltı") == 0.5 and distance("ko", "kø") == 0.5   # the recogniser's letters
    assert distance("kahvaltu", "kahvaltı") == 1.0 and distance("kahvalt1", "kahvaltı") == 1.0   # any other glyph
    assert distance("kahve", "kahvé") == 0.5 and distance("kahve", "kahva") == 1.0            # accents as shipped
    expected = "Kahvaltı Şehir Kø"
    correct = tr_score("Kahvalti Şehir Ko", expected, 0.5)["score"]
    typo = tr_score("Kahvalti Şehar Ko", expected, 0.5)["score"]
    missing = tr_score("Kahvalti Ko", expected, 0.5)["score"]
    assert correct == pytest.approx(1 - 1 / 17 / 2 - (0.5 / 8 + 0.5 / 2) / 3 / 2)
    assert correct > typo > missing


def test_candidate_free_makes_a_lookalike_typo_free(candidate):
    # i drawn where ı was asked: half a letter with "half", nothing with "free" (why "free" breaks correct > typo)
    assert candidate(free=True)("kahvalti", "kahvaltı") == 0.0
    assert tr_score("Kahvalti", "Kahvaltı", 0.5)["score"] == 1.0


def test_carrier_posters_put_a_letter_of_their_language_in_every_word(bench):
    drawn = bench.cases(8, 0)
    assert [case["language"] for case in drawn] == list(bench.DIACRITIC_LANGUAGES)   # one poster per language in turn
    for case in drawn:
        letters = set(bench.inventory(case["language"]))
        assert all(letters & set(word) for word in case["expected"].split())
        assert case["image"].size[0] in (512, 576)                                  # the tuning splits' canvases
