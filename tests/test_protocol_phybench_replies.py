"""PhyBench replies read as the benchmark's own code asks for them. GPT_make_eval.py stores each reply unparsed;
its pinned `answer` text asks for a Python dict (`{'scene_score': ..., 'phy_score': ..., 'scene_reason': ,
'phy_reason': }`), which Python reads with `ast.literal_eval`. So every reply in that format that
`ast.literal_eval` reads gives vistar's scores, whatever its single-quoted reasons hold (an unbalanced `{` or
`}`, double quotes, an escaped apostrophe), with vistar's template and with the upstream one."""
from __future__ import annotations

import ast

import pytest

from tests.support.protocol_helpers import shared
from tests.support.upstream_helpers import fake_module, load_module, upstream_dir
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.protocols import PROTOCOLS, phybench

REPLIES = [
    "{'scene_score': 2, 'phy_score': 3, 'scene_reason': 'label reads {g', 'phy_reason': 'ok'}",
    "{'scene_score': 1, 'phy_score': 0, 'scene_reason': 'a stray } brace', 'phy_reason': 'no {x} {y'}",
    "{'scene_score': 0, 'phy_score': 2, 'scene_reason': 'the \"seesaw\" is {missing', 'phy_reason': 'it\\'s tilted {'}",
    "Scores: {'scene_score': 2, 'phy_score': 1, 'scene_reason': '{{{', 'phy_reason': '}'} as asked.",
    '{"scene_score": 1, "phy_score": 3, "scene_reason": "the mouse\'s side {up", "phy_reason": "ok"}',
]


def _upstream_format() -> str:
    """The answer format GPT_make_eval.py asks for (its pinned `answer` constant, read from the script itself)."""
    script = load_module(upstream_dir("PhyBench") / "GPT_make_eval.py", {"xx": None},
                         openai=fake_module("openai", OpenAI=lambda **_: None), jsonlines=fake_module("jsonlines"))
    return script.answer


def test_the_script_asks_for_a_python_dict():
    assert "{'scene_score': Integer value from 0 to 2, 'phy_score': Integer value from 0 to 3" in _upstream_format()


@pytest.mark.parametrize("reply", REPLIES)
def test_replies_python_reads_are_read_alike(reply):
    start, end = reply.index("{"), reply.rindex("}") + 1
    expected = ast.literal_eval(reply[start:end])
    item = phybench.PhyItem("Gravity_0", "mechanics", "Gravity", "p", "a seesaw", "heavy side down", "criteria")
    upstream_query = PROTOCOLS["phybench"].upstream.queries(upstream_dir("PhyBench"), item)[0]
    for parse in (phybench.parse, upstream_query.parse):
        assert parse(reply) == {"scene": expected["scene_score"], "phy": expected["phy_score"]}


@pytest.mark.parametrize("reply", [
    "{'scene_score': 2, 'phy_score': 3, 'scene_reason': 'label reads {g",     # cut off inside a reason
    "{'scene_score': 2, 'phy_score': 3, 'scene_reason': 'ok', 'phy_rea",
    '{"scene_score": 2, "phy_score": 3, "scene_reason": "a } brace"',
])
def test_replies_cut_off_are_still_refused(reply):
    shared("PhyBench")
    with pytest.raises((SyntaxError, ValueError)):
        ast.literal_eval(reply[reply.index("{"):])
    with pytest.raises(ReplyFormatError, match="cut off"):
        phybench.parse(reply)
