"""WISE legacy and verified: parsers on hand-written replies, WiScore, categories by id, overall weights, importer."""
from __future__ import annotations

import collections
import json

import pytest

from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.protocols import aggregate, wise_legacy, wise_verified
from vistar.vlm.protocols.base import Outcome
from vistar.vlm.protocols.metrics import WISCORE_LEGACY, WISCORE_VERIFIED
from vistar.vlm.protocols.wise_common import WiseItem, category_of

from .protocol_helpers import rows, shared


def test_legacy_parser_and_wiscore():
    reply = 'Assessment:\n```json\n{"consistency": 2, "realism": "1", "aesthetic": 0}\n```'
    parsed = wise_legacy.parse(reply)
    assert parsed == {"consistency": 2, "realism": 1, "aesthetic_quality": 0}
    assert wise_legacy.wiscore(**parsed) == pytest.approx((0.7 * 2 + 0.2 * 1) / 2)
    assert wise_legacy.wiscore(2, 2, 2) == pytest.approx(1.0)


@pytest.mark.parametrize("reply", ['{"consistency": 3, "realism": 1, "aesthetic_quality": 1}',
                                   '{"consistency": 2, "realism": 1}',
                                   '{"consistency": true, "realism": 1, "aesthetic_quality": 1}',
                                   '{"consistency": 1.5, "realism": 1, "aesthetic_quality": 1}',
                                   "Consistency is good.", ""])
def test_legacy_parser_rejects_malformed(reply):
    with pytest.raises(ReplyFormatError):
        wise_legacy.parse(reply)


def test_verified_parser():
    assert wise_verified.parse('{"score": 1, "reason": "mooncakes shown"}') == {"score": 1, "reason": "mooncakes shown"}
    assert wise_verified.parse("{'score': '0'}") == {"score": 0, "reason": ""}
    for bad in ('{"score": 2}', '{"verdict": 1}', "yes"):
        with pytest.raises(ReplyFormatError):
            wise_verified.parse(bad)


def test_categories_follow_the_id_ranges_of_each_version():
    assert [category_of(i, wise_legacy.RANGES) for i in (1, 400, 401, 567, 568, 700, 701, 801, 1000)] == \
        ["culture", "culture", "time", "time", "space", "space", "biology", "physics", "chemistry"]
    assert [category_of(i, wise_verified.RANGES) for i in (400, 401, 520, 521, 640, 641, 761, 881, 1001)] == \
        ["culture", "time", "time", "space", "space", "biology", "physics", "chemistry", None]


def test_metrics_read_the_stage_outcome():
    item = WiseItem("402", "p", "e", "time", "", "wise-legacy")
    res = WISCORE_LEGACY.fn({"judge.wise-legacy": Outcome("wise-legacy", item, {"rubric": {"consistency": 1, "realism": 2, "aesthetic_quality": 2}})}, {}, {}, None)
    assert res.score == pytest.approx((0.7 + 0.4 + 0.2) / 2) and res.details["category"] == "time"
    res = WISCORE_VERIFIED.fn({"judge.wise-verified": Outcome("wise-verified", item, {"binary": {"score": 1, "reason": "r"}})}, {}, {}, None)
    assert res.score == 1.0


def test_overall_uses_the_fixed_category_weights():
    cats = {"culture": 0.5, "time": 0.2, "space": 0.4, "biology": 1.0, "physics": 0.0, "chemistry": 0.6}
    records = [{"model": "m", "prompt_id": str(i), "metric": "wiscore.verified", "score": v, "details": {"category": c}}
               for i, (c, v) in enumerate(cats.items())]
    records.append({"model": "m", "prompt_id": "x", "metric": "wiscore.verified", "score": None, "status": "error"})
    out = aggregate.wise(rows(records), "wiscore.verified")["m"]
    assert out["overall"] == pytest.approx(0.4 * 0.5 + 0.12 * (0.2 + 0.4 + 1.0 + 0.0 + 0.6))
    assert out["coverage"] == "6/7"
    legacy = [{**r, "metric": "wiscore.legacy"} for r in records[:-1]]
    assert aggregate.wise(rows(legacy), "wiscore.legacy")["m"]["overall"] == pytest.approx(
        0.4 * 0.5 + 0.167 * 0.2 + 0.133 * 0.4 + 0.1 * (1.0 + 0.0 + 0.6))
    assert aggregate.wise(rows(records[:2]), "wiscore.verified")["m"]["overall"] is None  # categories missing


def test_importers_on_the_public_data():
    root = shared("WISE")
    legacy, verified = wise_legacy.load_items(root), wise_verified.load_items(root.parent)  # benchmark dir or its parent
    assert len(legacy) == len(verified) == 1000 and not legacy.problems and not verified.problems
    assert collections.Counter(i.category for i in legacy) == {"culture": 400, "time": 167, "space": 133, "biology": 100, "physics": 100, "chemistry": 100}
    assert collections.Counter(i.category for i in verified) == {"culture": 400, "time": 120, "space": 120, "biology": 120, "physics": 120, "chemistry": 120}
    assert verified[0].id == "1" and "Mid-Autumn" in verified[0].prompt


def test_bad_records_are_reported_not_fatal(tmp_path):
    folder = tmp_path / "WISE" / "data_verified"
    folder.mkdir(parents=True)
    good = {"prompt_id": 1, "Prompt": "A mooncake", "Explanation": "round pastry", "Subcategory": "Festival"}
    (folder / "cultural_common_sense_verified.json").write_text(json.dumps([good, {"prompt_id": 2, "Prompt": "x"}, good, "junk"]))
    (folder / "spatio-temporal_reasoning_verified.json").write_text(json.dumps([{"prompt_id": 5000, "Prompt": "p", "Explanation": "e"}]))
    (folder / "natural_science_verified.json").write_text("[]")
    items = wise_verified.load_items(tmp_path)
    assert [i.id for i in items] == ["1"]
    text = "\n".join(items.problems)
    assert "record 1: field 'Explanation' missing" in text and "a duplicate" in text and "not an object" in text
    assert "outside the WISE id ranges" in text and "cultural_common_sense_verified.json" in text
