"""A small slice of TR's validity sets (vistar validate runs them whole): the rows come out as the contract says,
and on these posters the ladder and the unsupported-script report hold."""
from __future__ import annotations

import random

from vistar.validity import ValidityRow, sets_for
from vistar.validity.tr import TUNING, VALIDATION, sample_poster, with_typo, without_word


def test_poster_slice_orders_correct_typo_missing():
    rows = sets_for("TR")["posters"](4, 1)   # 2 Latin, 1 accented Latin, 1 Greek; seed 1: not in the documented run
    assert all(isinstance(r, ValidityRow) and r.angle == "TR" for r in rows)
    latin = {r.measure: r for r in rows if r.set == "posters (Latin)"}
    assert latin["correct > typo"].n == 3 and latin["correct > typo"].value == 1.0
    assert latin["typo > missing word"].value == 1.0
    assert {r.set for r in rows} >= {"posters (Latin)", "posters (Greek)"}


def test_unsupported_script_is_reported_not_scored():
    [row] = sets_for("TR")["unsupported script"](1, 1)
    assert row.value == 1.0 and row.met


def test_variants_change_exactly_what_they_say():
    rng = random.Random(0)
    for split in (TUNING, VALIDATION):
        for script in ("latin", "accented", "greek"):
            poster = sample_poster(rng, split, script)
            words, typo, missing = poster.text().split(), with_typo(poster, rng).text().split(), without_word(poster, rng).text().split()
            assert len(typo) == len(words) and sum(a != b for a, b in zip(words, typo)) == 1
            changed = next(b for a, b in zip(words, typo) if a != b)
            original = next(a for a, b in zip(words, typo) if a != b)
            assert len(changed) == len(original) and sum(x != y for x, y in zip(changed, original)) == 1
            assert len(missing) == len(words) - 1


def test_tuning_and_validation_do_not_share_vocabulary_or_ranges():
    from vistar.validity.tr import WORDS

    for bank in WORDS.values():
        assert not set(bank[TUNING.vocabulary::2]) & set(bank[VALIDATION.vocabulary::2])
    assert not set(TUNING.backgrounds) & set(VALIDATION.backgrounds) and TUNING.seed_offset != VALIDATION.seed_offset
    assert TUNING.angles != VALIDATION.angles and TUNING.font_sizes != VALIDATION.font_sizes
