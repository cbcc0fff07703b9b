"""HWPQ online phase: batched-reply validation, vote counting and the details kept per image."""
from __future__ import annotations

import pytest

from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.hwpq import online
from vistar.vlm.hwpq.metric import SF
from vistar.vlm.hwpq.questionnaire import validate

Q = validate({"levels": [
    {"level": "L1", "weight": 0.6, "pairs": [{"id": "p1", "weight": 1, "positive": "Is there a teapot?", "negative": "Is the teapot missing?"}]},
    {"level": "L4", "weight": 0.4, "pairs": [{"id": "p2", "weight": 1, "positive": "Is it harmonious?", "negative": "Is it discordant?"}]}]})


def test_batched_prompt_lists_every_question_once():
    text = online.batched_prompt(Q)
    for qid, question in Q.questions():
        assert f"{qid}: {question}" in text


def test_batched_parser_accepts_complete_answers():
    parse = online.batched_parser(Q)
    reply = 'Here you go: {"answers": {"p1.P": true, "p1.N": "no", "p2.P": 1, "p2.N": false}}'
    assert parse(reply) == {"p1.P": True, "p1.N": False, "p2.P": True, "p2.N": False}
    for other in ('{"Answers": {"p1.P": "Yes.", "p1.N": "NO", "p2.P": "true", "p2.N": 0}}',   # other judges' spellings
                  '```json\n{"p1.P": true, "p1.N": false, "p2.P": true, "p2.N": false,}\n```',  # no wrapper
                  # the same answers beside the wrapper, and a note there, are not a second answer
                  '{"answers": {"p1.P": true, "p1.N": false, "p2.P": true, "p2.N": false}, "p1.P": "yes", "p2.N": "not sure"}'):
        assert parse(other) == {"p1.P": True, "p1.N": False, "p2.P": True, "p2.N": False}


@pytest.mark.parametrize("reply,problem", [
    ('{"answers": {"p1.P": true, "p1.N": false, "p2.P": true}}', "no answer for question"),
    ('{"answers": {"p1.P": true, "p1.N": false, "p2.P": true, "p2.N": false, "p3.P": true}}', "unknown question"),
    ('{"answers": {"p1.P": "maybe", "p1.N": false, "p2.P": true, "p2.N": false}}', "true or false"),
    ('{"answers": [true, false, true, false]}', "must map"),
    ("All yes.", "no JSON object"),
    ('{"answers": {"p1.P": true, "p1.N": false, "p2.P": true, "p2.N": false}, "p1.P": false, "p2.N": "yes"}',
     "p1.P, p2.N answered both true and false .* ambiguous"),
    ('{"answers": {"p1.P": true, "p1.N": false, "p2.P": true, "p2.N": false}, '
     '"Answers": {"p1.P": true, "p1.N": true, "p2.P": true, "p2.N": false}}', "p1.N answered both"),
])
def test_batched_parser_rejects_malformed_replies(reply, problem):
    with pytest.raises(ReplyFormatError, match=problem):
        online.batched_parser(Q)(reply)


@pytest.mark.parametrize("reply, answer", [("1", True), ("0", False), (" 1.\n", True), ("Yes.", True), ("FALSE", False)])
def test_a_bare_word_or_1_0_is_an_answer(reply, answer):
    assert online.parse_single(reply) is answer


@pytest.mark.parametrize("reply", ["2", "0.5", ".1", "10", "-1", "1/2", "1 0"])
def test_a_bare_number_other_than_1_or_0_is_re_asked(reply):
    with pytest.raises(ReplyFormatError, match="missing 'answer'"):
        online.parse_single(reply)


def test_metric_uses_the_majority_of_votes_and_keeps_every_vote():
    votes = {"p1.P": [True, False, True], "p1.N": [False, False, True],   # P by 2/3, N by 1/3: S=1
             "p2.P": [False, True, False], "p2.N": [False, False, False]}  # P loses: S=0
    result = SF.fn({"hwpq": online.HwpqOutcome(Q, votes, "per-question")}, {}, {}, None)
    assert result.status == "ok" and result.score == pytest.approx(0.6)
    assert result.details["votes"] == votes and result.details["k"] == 3
    assert [p["S"] for p in result.details["pairs"]] == [1.0, 0.0]
