"""A small slice of TR's validity sets (vistar validate runs them whole): the rows come out as the contract says,
and on these posters the ladder and the unsupported-script reports hold."""
from __future__ import annotations

import random

import pytest

from vistar.validity import ValidityRow, sets_for
from vistar.validity.tr import (
    DIACRITIC_LANGUAGES,
    TUNING,
    VALIDATION,
    Scorer,
    ladder_cases,
    ladder_rows,
    poster_script,
    sample_poster,
    score_ladder,
    with_typo,
    without_word,
)


@pytest.mark.slow
def test_poster_slice_orders_correct_typo_missing():
    # 2 plain Latin, 2 with diacritics (French, German), from the tuning split: the validation split is redrawn for
    # every held-out check (docs/validity.md), and its goals (0.98 / 0.95, not 1) are `vistar validate`'s to report,
    # so the suite checks the ladder end to end where TR's choices were made. A poster the OCR reads nothing on
    # ties at 0 and is left out here.
    scored = score_ladder(ladder_cases(4, 1, TUNING), Scorer())
    read = [s for s in scored if s["read"]]
    assert len(read) >= 3 and {s["script"] for s in read} & set(DIACRITIC_LANGUAGES)
    assert all(s["correct"] > s["typo"] > s["missing"] for s in read), [(s["expected"], s["read"]) for s in read]
    rows = ladder_rows(scored, "posters")
    assert all(isinstance(r, ValidityRow) and r.angle == "TR" for r in rows)
    assert {r.set for r in rows} == {"posters (Latin)", "posters (Latin diacritics)"}


@pytest.mark.slow
def test_unsupported_scripts_are_reported_not_scored():
    rows = sets_for("TR")["unsupported script"](1, 1)
    assert [r.set for r in rows] == ["unsupported (cyrillic)", "unsupported (greek)", "unsupported (vietnamese)"]
    assert all(r.value == 1.0 and r.met for r in rows)
    assert "scored with Greek opted in" in rows[1].note


def test_poster_scripts_alternate_plain_and_each_diacritic_language():
    assert [poster_script(k) for k in range(6)] == ["latin", "french", "latin", "german", "latin", "spanish"]
    assert {poster_script(k) for k in range(32)} == {"latin", *DIACRITIC_LANGUAGES}


def test_variants_change_exactly_what_they_say():
    rng = random.Random(0)
    for split in (TUNING, VALIDATION):
        for script in ("latin", *DIACRITIC_LANGUAGES, "greek", "vietnamese"):
            poster = sample_poster(rng, split, script)
            words, typo, missing = poster.text().split(), with_typo(poster, rng).text().split(), without_word(poster, rng).text().split()
            assert len(typo) == len(words) and sum(a != b for a, b in zip(words, typo)) == 1
            changed = next(b for a, b in zip(words, typo) if a != b)
            original = next(a for a, b in zip(words, typo) if a != b)
            assert len(changed) == len(original) and sum(x != y for x, y in zip(changed, original)) == 1
            assert len(missing) == len(words) - 1


def test_a_poster_without_a_word_to_change_is_redrawn(monkeypatch):
    from vistar.validity import tr

    short = tr.Poster([["Kø", "Kø"]], [[["Kø"]]], "nordic", {})
    with pytest.raises(ValueError):
        with_typo(short, random.Random(0))
    draws = iter([short])
    monkeypatch.setattr(tr, "sample_poster", lambda rng, split, script: next(draws, None) or sample_poster(rng, split, script))
    (case,) = ladder_cases(1, 0)
    assert case["expected"] != "Kø Kø Kø"


def test_tuning_and_validation_do_not_share_vocabulary_or_ranges():
    from vistar.validity.tr import WORDS

    for bank in WORDS.values():
        assert not set(bank[TUNING.vocabulary::2]) & set(bank[VALIDATION.vocabulary::2])
    assert not set(TUNING.backgrounds) & set(VALIDATION.backgrounds) and TUNING.seed_offset != VALIDATION.seed_offset
    assert TUNING.angles != VALIDATION.angles and TUNING.font_sizes != VALIDATION.font_sizes


@pytest.mark.slow
def test_script_reading_rows_cover_every_script():
    rows = sets_for("TR")["script reading"](2, 1)
    assert {r.set for r in rows} == {f"plain words ({s})" for s in ("latin", *DIACRITIC_LANGUAGES, "greek", "vietnamese")}
    latin = {r.measure: r.value for r in rows if r.set == "plain words (latin)"}
    assert latin == {"read exactly": 1.0, "mean TR, exact render": 1.0}   # plain Latin on paper is read exactly
