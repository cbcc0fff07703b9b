"""HWPQ questionnaire: schema, safe repair with a report, the score formula and the majority vote."""
from __future__ import annotations

import json

import jsonschema
import pytest

from vistar.vlm.errors import DataError
from vistar.vlm.hwpq.questionnaire import SCHEMA_PATH, majority, repair, score, validate

GOOD = {"schema_version": 1, "levels": [
    {"level": "L1", "weight": 0.5, "pairs": [
        {"id": "a", "weight": 0.75, "positive": "Is there a teapot?", "negative": "Is the teapot missing?"},
        {"id": "b", "weight": 0.25, "positive": "Is there a saucer?", "negative": "Is the saucer missing?"}]},
    {"level": "L3", "weight": 0.3, "pairs": [
        {"id": "c", "weight": 1.0, "positive": "Are both styles blended?", "negative": "Are the styles side by side?"}]},
    {"level": "L4", "weight": 0.2, "pairs": [
        {"id": "d", "weight": 1.0, "positive": "Does it look coherent?", "negative": "Does it look incoherent?"}]}]}


def test_score_is_the_weighted_sum_of_pairs_with_p_true_and_n_false():
    q = validate(GOOD)
    answers = {"a.P": True, "a.N": False,    # S=1
               "b.P": True, "b.N": True,     # contradictory: S=0
               "c.P": True, "c.N": False,    # S=1
               "d.P": False, "d.N": False}   # S=0
    value, pairs = score(q, answers)
    assert value == pytest.approx(0.5 * 0.75 + 0.3 * 1.0)
    assert [p["S"] for p in pairs] == [1.0, 0.0, 1.0, 0.0]


def test_majority_of_three():
    assert majority([True, True, False]) and not majority([True, False, False]) and majority([True] * 3)


def test_valid_questionnaire_has_no_repairs_and_matches_the_json_schema():
    q, repairs = repair(GOOD)
    assert repairs == []
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(q.to_json(), schema)
    jsonschema.validate(GOOD, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema_version": 1, "levels": [{"level": "L5", "weight": 1, "pairs": []}]}, schema)


def test_safe_repairs_are_applied_and_reported():
    messy = {"levels": [
        {"level": "L2", "weight": 2, "pairs": [
            {"id": "x", "weight": 3, "positive": "Is the cup glazed?", "negative": "Is the cup unglazed?"},
            {"id": "y", "weight": 1, "positive": "Is it?", "negative": "Is it not?"},                 # too short: dropped
            {"id": "z", "weight": 1, "positive": "Is the cup blue?", "negative": "is the cup blue?"},  # identical: dropped
            {"id": "x", "weight": 1, "positive": "Is the rim gold?", "negative": "Is the rim silver?"}]},  # dup id
        {"level": "L1", "weight": 2, "pairs": [
            {"positive": "Is there a cup?", "negative": "Is there no cup?"}]},                       # no weight, no id
        {"level": "L9", "weight": 1, "pairs": []}]}                                                 # bad level: dropped
    q, repairs = repair(messy)
    assert [lv.level for lv in q.levels] == ["L1", "L2"]
    assert [lv.weight for lv in q.levels] == pytest.approx([0.5, 0.5])
    l2 = q.levels[1]
    assert [p.weight for p in l2.pairs] == pytest.approx([0.75, 0.25])
    ids = [p.id for lv in q.levels for p in lv.pairs]
    assert len(set(ids)) == len(ids) == 3
    assert sum(lv.weight * sum(p.weight for p in lv.pairs) for lv in q.levels) == pytest.approx(1.0)
    text = " | ".join(repairs)
    for expected in ("levels[2]: dropped", "pairs[1]: dropped", "identical", "replaced by", "renormalised", "reordered", "set equal"):
        assert expected in text
    assert q.repairs == tuple(repairs)


@pytest.mark.parametrize("bad", [[], {"levels": "x"}, {"levels": [{"level": "L1", "weight": 1, "pairs": [{"positive": "no"}]}]}])
def test_unrepairable_questionnaires_are_rejected(bad):
    with pytest.raises(DataError):
        repair(bad)


def test_strict_validation_names_the_problem():
    unnormalised = json.loads(json.dumps(GOOD))
    unnormalised["levels"][0]["weight"] = 0.9
    with pytest.raises(DataError, match="level weights: summed to 1.4"):
        validate(unnormalised, "q.json")


def test_hash_changes_with_an_edit_only():
    q1, q2 = validate(GOOD), validate(json.loads(json.dumps(GOOD)))
    assert q1.hash == q2.hash
    edited = json.loads(json.dumps(GOOD))
    edited["levels"][2]["pairs"][0]["positive"] = "Does it look harmonious?"
    assert validate(edited).hash != q1.hash


def test_generated_reply_is_repaired_and_attributed():
    from vistar.prompts_dsl import parse_prompt
    from vistar.vlm.errors import ReplyFormatError
    from vistar.vlm.hwpq import generate

    reply = ('Here is the questionnaire:\n{"levels": [{"level": "L1", "weight": 1, "pairs": ['
             '{"id": "L1.1", "weight": 0.5, "positive": "Is there a kimono?", "negative": "Is the kimono absent?"},'
             '{"id": "L1.2", "weight": 0.5, "positive": "Is it?", "negative": "Isn\'t it?"}]}]}')
    parsed = generate.parse(reply)
    q = generate.from_reply(parsed)
    assert [p.id for lv in q.levels for p in lv.pairs] == ["L1.1"] and q.levels[0].pairs[0].weight == 1.0
    assert any("dropped" in r for r in q.repairs)
    prompt = parse_prompt('[IL|CUL] a Heian-period court lady {culture="Heian Japan"}', id="c1")
    final = generate.finish(q, prompt, "gen-model")
    assert final.prompt_fingerprint == prompt.fingerprint and final.angle == "CUL" and final.source["generator"] == "gen-model"
    assert "culture=Heian Japan" in generate.request(prompt).user and "cultural-historical" in generate.request(prompt).user
    with pytest.raises(ReplyFormatError):
        generate.parse('{"levels": []}')


@pytest.mark.parametrize("bad", [-0.3, "0.7", float("nan"), True])
def test_a_level_whose_weight_is_given_but_unusable_is_dropped(bad):
    """As a pair with a non-positive weight is: the level does not get the others' mean. Hand-computed: L2 is
    dropped, L1 (0.7) and L4 (0.1) renormalise to 7/8 and 1/8; L1's pair holds (P yes, N no), L4's fails."""
    q, repairs = repair({"levels": [{"level": "L1", "weight": 0.7, "pairs": [_pair("a")]},
                                    {"level": "L2", "weight": bad, "pairs": [_pair("b")]},
                                    {"level": "L4", "weight": 0.1, "pairs": [_pair("d")]}]})
    assert [(lv.level, lv.weight) for lv in q.levels] == [("L1", pytest.approx(7 / 8)), ("L4", pytest.approx(1 / 8))]
    assert f"levels[1] (L2): dropped (weight must be a number >= 0, got {bad!r})" in repairs
    value, _ = score(q, {"a.P": True, "a.N": False, "d.P": True, "d.N": True})
    assert value == pytest.approx(7 / 8)


def test_a_level_of_weight_zero_is_kept_as_the_schema_allows():
    q, repairs = repair({"levels": [{"level": "L1", "weight": 0, "pairs": [_pair("a")]},
                                    {"level": "L4", "weight": 1, "pairs": [_pair("b")]}]})
    assert [lv.weight for lv in q.levels] == [0.0, 1.0] and repairs == []


def _pair(pid: str) -> dict:
    return {"id": pid, "weight": 1, "positive": f"Is the {pid} cup red?", "negative": f"Is the {pid} cup blue?"}
