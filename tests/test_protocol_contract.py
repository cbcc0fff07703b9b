"""Every registered protocol, through its declaration only: the demo judge's reply to each of its questions is
read by the question's own parser, each declared score is in [0, 1], the aggregation has the model and the
headline reads it; the demo judge finds the protocol by its declared system prompt, so rewording the question
text does not leave it answering "I cannot tell"."""
from __future__ import annotations

import json

import pytest

from tests.support.protocol_helpers import SHARED, rows
from vistar.engine import registry
from vistar.vlm.protocols.base import Outcome
from vistar.vlm.testing_server import answer

FACTS = ("gray", True)   # a bright image: full marks on every rubric


def _data(proto, tmp_path):
    """The benchmark's public data beside the repository; PhyBench's holds only its code, so its test records."""
    if proto.name == "phybench":
        from tests.support.phybench_files import write_phybench

        return write_phybench(tmp_path / "PhyBench")
    if not (SHARED / proto.data_subdir).is_dir():
        pytest.skip(f"public {proto.data_subdir} data not found under ../shared/data")
    return proto.data_root(SHARED)


def _judged(proto, tmp_path):
    root = _data(proto, tmp_path)
    items = proto.load_items(root)
    item = items[0]
    crit = proto.criteria(item)
    criteria = crit.parse(proto.demo_reply(crit.system, crit.user, FACTS)) if crit else None
    asked = proto.queries(item, criteria=criteria, data_dir=root)
    answers = {q.qid: q.parse(proto.demo_reply(q.system, q.user, FACTS)) for q in asked}
    return items, item, asked, Outcome(proto.name, item, answers, {"criteria": criteria})


@pytest.mark.parametrize("name", list(registry.PROTOCOLS))
def test_declaration_answers_scores_and_summarises(name, tmp_path):
    proto = registry.protocol(name)
    items, item, asked, outcome = _judged(proto, tmp_path)
    assert asked and all(q.system in proto.systems for q in asked)
    records = []
    for metric, score in proto.scores.items():
        value, details = score(outcome)
        assert 0.0 <= value <= 1.0
        result = registry.metric(metric).fn({proto.stage: outcome}, {}, {}, None)
        assert result.status == "ok" and result.score == pytest.approx(value)
        records.append({"model": "m", "prompt_id": item.id, "metric": metric, "score": value,
                        "details": {**details}})
    numbers = proto.aggregate(rows(json.loads(json.dumps(records, default=str))), None)
    assert set(numbers) == {"m"}
    assert proto.headline(numbers["m"])


@pytest.mark.parametrize("name", list(registry.PROTOCOLS))
def test_demo_judge_finds_the_protocol_by_identity_not_wording(name, tmp_path):
    proto = registry.protocol(name)
    _, _, asked, _ = _judged(proto, tmp_path)
    for q in asked:
        reworded = q.user.replace("image", "picture").replace("Reply", "Answer")
        messages = [{"role": "system", "content": q.system}, {"role": "user", "content": reworded}]
        reply = answer(messages)
        assert reply == proto.demo_reply(q.system, reworded, ("gray", False)) and reply != "I cannot tell."
        q.parse(reply)


@pytest.mark.parametrize("name", list(registry.PROTOCOLS))
def test_each_protocol_module_owns_its_aggregation_and_upstream_questions(name):
    """The declaration's aggregation and its benchmark's own questions are defined in the protocol's module (the
    two WISE versions: or in the module they share), not in a table of all protocols."""
    proto = registry.protocol(name)
    home = registry.PROTOCOLS[name].split(":")[0]
    own = {home, "vistar.vlm.protocols.wise_common"} if name.startswith("wise-") else {home}
    assert proto.aggregate.__module__ in own
    assert proto.upstream is not None
    for builder in (proto.upstream.ask, proto.upstream.criteria):
        assert getattr(builder, "func", builder).__module__ in own | {"vistar.vlm.protocols.base"}  # base: "no criteria"
