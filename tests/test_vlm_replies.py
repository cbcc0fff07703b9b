"""Judge replies as other judge models write them: every reply parses to the intended value or is rejected
with a reason (re-asked, then recorded), never read as a different value; end to end through the client."""
from __future__ import annotations

import pytest

from tests.support.vlm_helpers import RED, fast_config, solid
from vistar.vlm.client import ChatClient
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.hwpq import online
from vistar.vlm.images import png_bytes
from vistar.vlm.protocols import genexam, phybench, wise_legacy, wise_verified
from vistar.vlm.testing_server import JudgeServer
from vistar.vlm.types import JudgeRequest

WISE = {"consistency": 2, "realism": 1, "aesthetic_quality": 0}
EXAM = {"points": [1, 0, 1], "spelling": 2, "readability": 1, "logic": 2}
PHY = {"scene": 2, "phy": 1}

GOOD = [  # (parser, reply, value)
    (wise_legacy.parse, '{"consistency": 2, "realism": 1, "aesthetic_quality": 0}', WISE),
    (wise_legacy.parse, 'Here you go:\n```json\n{"consistency": 2, "realism": 1, "aesthetic_quality": 0,}\n```\nHope it helps.', WISE),
    (wise_legacy.parse, "{'consistency': 2, 'realism': 1, 'aesthetic_quality': 0, 'confident': true}", WISE),
    (wise_legacy.parse, '{"Consistency": "2", "REALISM": "1/2", "Aesthetic Quality": "Score: 0"}', WISE),
    (wise_legacy.parse, '{"consistency": 2.0, "realism": {"score": 1, "why": "flat light"}, "aestheticQuality": 0}', WISE),
    (wise_legacy.parse, '{"scores": {"consistency": 2, "realism": 1, "aesthetic_quality": 0}, "summary": "ok"}', WISE),
    (wise_legacy.parse, "Consistency: 2\nRealism: 1\nAesthetic Quality: 0", WISE),  # the benchmark's own output format
    (wise_legacy.parse, "**Consistency:** 2 — all there\n**Realism**: 1\n- Aesthetic quality (0-2): 0", WISE),
    (wise_verified.parse, '{"Score": "1", "Reason": "mooncakes shown"}', {"score": 1, "reason": ""}),
    (wise_verified.parse, "{'score': 1, 'reason': 'it's a mooncake'}", {"score": 1, "reason": ""}),  # apostrophe breaks the dict
    (wise_verified.parse, "Score: 0\nThe lantern is missing.", {"score": 0, "reason": ""}),
    (genexam.make_parser(3), '{"points": [1, 0, 1], "spelling": 2, "readability": 1, "logic": 2}', EXAM),
    (genexam.make_parser(3), '{"Points": [true, false, "yes"], "Spelling": "2/2", "Readability": 1, "Logic": "2"}', EXAM),
    (phybench.parse, "{'scene_score': 2, 'phy_score': 1, 'scene_reason': 'seesaw', 'phy_reason': 'the mouse's side is down'}", PHY),
    (phybench.parse, "Scene score: 2\nPhysical laws score: 1 (the mouse's side is down)", PHY),
    (phybench.parse, '{"Scene_Score": "2", "Phy_Score": "1/3"}', PHY),
    (online.parse_single, '{"Answer": "Yes."}', True),
    (online.parse_single, "no", False),
]

BAD = [  # (parser, reply, what the rejection says)
    (wise_legacy.parse, '{"consistency": 3, "realism": 1, "aesthetic_quality": 0}', "'consistency' must be an integer from 0 to 2, got 3"),
    (wise_legacy.parse, '{"consistency": -1, "realism": 1, "aesthetic_quality": 0}', "'consistency' must be an integer"),
    (wise_legacy.parse, '{"consistency": 1.5, "realism": 1, "aesthetic_quality": 0}', "got 1.5"),
    (wise_legacy.parse, '{"consistency": "Score: 1.5", "realism": 1, "aesthetic_quality": 0}', "got 'Score: 1.5'"),
    (wise_legacy.parse, '{"consistency": "4/5", "realism": 1, "aesthetic_quality": 0}', "0-5 scale"),
    (wise_legacy.parse, '{"consistency": "high", "realism": 1, "aesthetic_quality": 0}', "got 'high'"),
    (wise_legacy.parse, '{"consistency": null, "realism": 1, "aesthetic_quality": 0}', "got None"),
    (wise_legacy.parse, '{"consistency": 2, "realism": 1}', "missing 'aesthetic_quality'"),
    (wise_legacy.parse, '{"consistency": 2, "realism": 1, "aesthetic_quality": 0', "cut off"),
    (wise_legacy.parse, "Consistency: 2\nRealism: 1\nConsistency: 1\nAesthetic Quality: 0", "more than once with different values"),
    (wise_legacy.parse, "I can't help with that.", "missing 'consistency'"),
    (wise_legacy.parse, "", "empty reply"),
    (wise_legacy.parse, "   \n", "empty reply"),
    (wise_verified.parse, '{"score": 2, "reason": "very good"}', "'score' must be an integer from 0 to 1"),
    (wise_verified.parse, '{"score": true}', "got True"),
    (genexam.make_parser(3), '{"points": [1, 0], "spelling": 2, "readability": 1, "logic": 2}', "2 answers but there are 3"),
    (phybench.parse, "{'scene_score': 2, 'phy_score': 4}", "'phy_score' must be an integer from 0 to 3"),
    (online.parse_single, "No, I can't judge this image.", "missing 'answer'"),
    (online.parse_single, '{"answer": "maybe"}', "must be true or false"),
]


@pytest.mark.parametrize("parse,reply,value", GOOD)
def test_replies_of_other_judges_parse_to_the_intended_value(parse, reply, value):
    assert parse(reply) == value


@pytest.mark.parametrize("parse,reply,problem", BAD)
def test_unusable_replies_are_rejected_with_the_reason(parse, reply, problem):
    with pytest.raises(ReplyFormatError) as info:
        parse(reply)
    assert problem in str(info.value)


@pytest.mark.parametrize("parse,reply,value", [g for g in GOOD if g[0] is not online.parse_single])
def test_a_reply_cut_off_anywhere_never_reads_as_another_value(parse, reply, value):
    """Every prefix of a good reply (as a judge stopped by max_tokens would send) parses to the same value or
    is rejected; none parses to something else."""
    for end in range(len(reply)):
        try:
            got = parse(reply[:end])
        except ReplyFormatError:
            continue
        assert got == value, (reply[:end], got)


AMBIGUOUS_OR_CUT_OFF = [  # (parser, reply, what the rejection says); each was once read as some score
    # a complete example object, then the real answer cut off by max_tokens: the example is not the answer
    (wise_legacy.parse, ('Answer format: {"consistency": 0, "realism": 0, "aesthetic_quality": 0}. '
                         'My answer: {"consistency": 2, "realism": 1, "aesthetic_quality": 1, "reason": "the cat is'), "cut off"),
    (wise_legacy.parse, ('```json\n{"consistency": 0, "realism": 0, "aesthetic_quality": 0}\n```\n'
                         'Final: ```json\n{"consistency": 2, "realism": 1, "aesth'), "cut off"),
    (online.parse_single, 'Reply as {"answer": true}. Answer: {"answer": false, "why": "the', "cut off"),
    (wise_legacy.parse, '{"scores": {"consistency": 2, "realism": 1, "aesthetic_quality": 0}, "summary": "o', "cut off"),
    # the number before a range is the scale, not the score
    (wise_legacy.parse, "Consistency: 0-2 scale; I would rate it 2\nRealism: 1\nAesthetic Quality: 0", "missing 'consistency'"),
    (wise_legacy.parse, "Consistency: 0\u20132 scale; I would rate it 2\nRealism: 1\nAesthetic Quality: 0", "missing 'consistency'"),
    (wise_legacy.parse, "Consistency: 0 to 2, I say 2\nRealism: 1\nAesthetic Quality: 0", "missing 'consistency'"),
    (phybench.parse, "Scene score: 0 - 2 scale -> 2\nPhysical laws score: 1", "missing 'scene_score'"),
    # one key in several places with different values
    (wise_legacy.parse, ('{"image_a": {"consistency": 2, "realism": 1, "aesthetic_quality": 0}, '
                         '"image_b": {"consistency": 0, "realism": 1, "aesthetic_quality": 0}}'), "ambiguous"),
    (wise_legacy.parse, '{"Consistency": 2, "consistency": 0, "realism": 1, "aesthetic_quality": 0}', "ambiguous"),
    (wise_legacy.parse, '{"consistency": 2, "consistency": 0, "realism": 1, "aesthetic_quality": 0}', "ambiguous"),
    (wise_legacy.parse, "{'consistency': 2, 'consistency': 0, 'realism': 1, 'aesthetic_quality': 0}", "ambiguous"),
    (wise_legacy.parse, '{"consistency": 1, "realism": 1, "aesthetic_quality": 0, "final": {"consistency": 2}}', "ambiguous"),
    (wise_legacy.parse, '{"consistency": {"score": 2, "Score": 0}, "realism": 1, "aesthetic_quality": 0}', "ambiguous"),
    (wise_verified.parse, '{"score": 1, "details": {"score": 0}}', "ambiguous"),
    (online.parse_single, '{"answer": true, "Answer": "no"}', "ambiguous"),
]


@pytest.mark.parametrize("parse,reply,problem", AMBIGUOUS_OR_CUT_OFF)
def test_ambiguous_or_cut_off_answers_are_refused_not_read(parse, reply, problem):
    with pytest.raises(ReplyFormatError) as info:
        parse(reply)
    assert problem in str(info.value)


@pytest.mark.parametrize("parse,reply,value", [
    (wise_legacy.parse, '{"Consistency": 2, "consistency": "2/2", "realism": 1, "scores": {"realism": 1.0}, "aesthetic_quality": 0}', WISE),
    (wise_legacy.parse, "Consistency (0-2): 2\nRealism: 1 - flat light\nAesthetic Quality: 0", WISE),
    # `Key: N` lines are read before they are compared, as keys in a JSON object are
    (wise_legacy.parse, "Consistency: 2\nRealism: 1\nAesthetic Quality: 0\nSo consistency: 2/2", WISE),
    (wise_legacy.parse, "Consistency: 2\nRealism: 1.0\nRealism = 1\nAesthetic Quality: 0", WISE),
    (online.parse_single, '{"answer": true, "Answer": "yes"}', True),
])
def test_a_key_given_twice_with_the_same_value_and_a_scale_in_parentheses_are_read(parse, reply, value):
    assert parse(reply) == value


@pytest.mark.parametrize("parse,reply,value", [
    # a score ending a sentence: the full stop is punctuation, not a decimal point
    (wise_legacy.parse, "Consistency: 2. The lantern is shown.\nRealism: 1. Flat light.\nAesthetic Quality: 0.", WISE),
    # a nested explanation under the same key beside the top-level answer is not a second answer
    (wise_legacy.parse, '{"consistency": 2, "realism": 1, "aesthetic_quality": 0, '
                        '"details": {"consistency": "fully consistent with the prompt"}}', WISE),
    # a brace inside a JSON string is text, not a cut-off object
    (wise_verified.parse, '{"score": 1, "reason": "the sign shows a lone { brace"}', {"score": 1, "reason": "the sign shows a lone { brace"}),
])
def test_sentence_full_stops_nested_explanations_and_braces_in_strings_are_read(parse, reply, value):
    assert parse(reply) == value


@pytest.mark.parametrize("reply, problem", [
    ("Consistency: 10.\nRealism: 1\nAesthetic Quality: 0", "must be an integer from 0 to 2, got '10'"),
    ("Consistency: 1.5.\nRealism: 1\nAesthetic Quality: 0", "got '1.5'"),
    ('{"consistency": 2, "realism": 1, "aesthetic_quality": 0, "details": {"consistency": 0}}', "more than once"),
])
def test_full_stop_and_nested_cases_that_must_still_be_refused(reply, problem):
    with pytest.raises(ReplyFormatError) as info:
        wise_legacy.parse(reply)
    assert problem in str(info.value)


@pytest.fixture()
def server():
    with JudgeServer() as srv:
        yield srv


def _ask(server, tmp_path, **cfg):
    user = wise_legacy.USER.format(prompt="A mooncake", explanation="a round pastry")
    req = JudgeRequest("wise-legacy@1", "1/rubric", "t", user, wise_legacy.SYSTEM, (png_bytes(solid(RED)),), "sha")
    return ChatClient(fast_config(server.url, tmp_path, **cfg)).complete(req, wise_legacy.parse)


def test_other_judge_formats_through_the_client(server, tmp_path):
    server.replies.extend(["**Consistency**: 2\n**Realism**: 1\n**Aesthetic Quality**: 0"])
    reply = _ask(server, tmp_path)
    assert reply.ok and reply.parsed == WISE and reply.reasks == 0


@pytest.mark.parametrize("first", ["", "I'm sorry, I can't help with that.", '{"consistency": 7, "realism": 1, "aesthetic_quality": 0}',
                                   '{"consistency": 2, "realism": 1, "aesth'])
def test_a_bad_first_reply_is_reasked_with_the_reason(server, tmp_path, first):
    server.replies.extend([first, '{"consistency": 2, "realism": 1, "aesthetic_quality": 0}'])
    reply = _ask(server, tmp_path)
    assert reply.ok and reply.parsed == WISE and reply.reasks == 1
    assert "could not be used" in server.requests[1]["messages"][-1]["content"]


def test_a_refusal_without_content_is_reasked_not_retried_as_a_broken_response(server, tmp_path):
    server.faults.extend(["refusal"])
    reply = _ask(server, tmp_path)
    assert reply.ok and reply.reasks == 1 and reply.attempts == 2  # the server's own answer for a dark image
    assert reply.parsed == {"consistency": 0, "realism": 0, "aesthetic_quality": 1}
    assert server.requests[1]["messages"][-2] == {"role": "assistant", "content": "I'm sorry, I can't help with that."}


def test_a_judge_that_stays_out_of_range_is_a_recorded_failure_with_its_reply(server, tmp_path):
    bad = '{"consistency": 3, "realism": 2, "aesthetic_quality": 2}'
    server.replies.extend([bad, bad])
    reply = _ask(server, tmp_path, max_reasks=1)
    assert not reply.ok and reply.parsed is None and len(server.requests) == 2
    assert reply.error.startswith("malformed reply after 2 attempt(s): 'consistency' must be an integer from 0 to 2, got 3")
    assert repr(bad) in reply.error and reply.text == bad


FINAL = {"score": 1, "reason": "final"}
LAST_ANSWER_WINS = [  # (reply, value): the judge's last object is its answer, not a draft or an example before it
    ('Draft:\n```json\n{"score": 0, "reason": "draft"}\n```\nOn reflection:\n```json\n{"score": 1, "reason": "final"}\n```', FINAL),
    ('```json\n{"score": 0, "reason": "example"}\n{"score": 1, "reason": "final"}\n```', FINAL),
    ('```json\n{"score": 0, "reason": "draft"}\n```\nFinal answer: {"score": 1, "reason": "final"}', FINAL),
    ('```json\n{"score": 1, "reason": "final"}\n```\nThat is my answer.', FINAL),
    ('```python\n{\'score\': 0}\n```\n```json\n{"score": 1, "reason": "final"}\n```', FINAL),
]
BRACES_IN_STRINGS = [  # (reply, value): a brace inside a JSON string is text
    ('{"score": 1, "reason": "the label reads }"}', {"score": 1, "reason": "the label reads }"}),
    ('{"score": 0, "reason": "a lone { and a } and {x}"}', {"score": 0, "reason": "a lone { and a } and {x}"}),
    ('```json\n{"score": 1, "reason": "quote \\" and brace } escaped"}\n```', {"score": 1, "reason": 'quote " and brace } escaped'}),
    ('{"score": 0, "reason": "draft }"} then {"score": 1, "reason": "final { open"}', {"score": 1, "reason": "final { open"}),
    ("{'score': 1, 'reason': 'a } in a Python string'}", {"score": 1, "reason": "a } in a Python string"}),
]


@pytest.mark.parametrize("reply,value", LAST_ANSWER_WINS + BRACES_IN_STRINGS)
def test_the_last_object_wins_and_braces_in_strings_are_text(reply, value):
    assert wise_verified.parse(reply) == value


@pytest.mark.parametrize("reply,problem", [
    ('```json\n{"score": 1, "reason": "final"}\n```\n```json\n{"score": 0, "reason": "cut', "cut off"),
    ('{"score": 1, "reason": "a } brace"', "cut off"),
    ('{"score": 1, "reason": "ok"} and then {"score": 2, "reason": "final"}', "'score' must be an integer from 0 to 1, got 2"),
])
def test_a_final_answer_that_is_cut_off_or_out_of_range_is_refused_not_replaced_by_a_draft(reply, problem):
    with pytest.raises(ReplyFormatError) as info:
        wise_verified.parse(reply)
    assert problem in str(info.value)
