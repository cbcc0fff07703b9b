"""WISE legacy and verified: parsers on hand-written replies, WiScore, categories by id, overall weights, importer."""
from __future__ import annotations

import collections
import json

import pytest

from tests.support.protocol_helpers import rows, shared
from vistar.engine import registry
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.protocols import wise_legacy, wise_verified
from vistar.vlm.protocols.base import Outcome
from vistar.vlm.protocols.wise_common import WiseItem, category_of

# the protocols' metrics, as the registry builds them from their declarations
WISCORE_LEGACY = registry.metric("wiscore.legacy")
WISCORE_VERIFIED = registry.metric("wiscore.verified")


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
    out = wise_verified.summarize(rows(records))["m"]
    # ids 0-5 cover five of the 1000 prompt ids: upstream gives no overall; vistar's partial overall is kept, labelled
    assert out["overall"] is None and out["missing_ids"] == 995
    assert out["vistar_overall_partial"] == pytest.approx(0.4 * 0.5 + 0.12 * (0.2 + 0.4 + 1.0 + 0.0 + 0.6))
    assert out["coverage"] == "6/7"
    legacy = [{**r, "metric": "wiscore.legacy"} for r in records[:-1]]
    assert wise_legacy.summarize(rows(legacy))["m"]["vistar_overall_partial"] == pytest.approx(
        0.4 * 0.5 + 0.167 * 0.2 + 0.133 * 0.4 + 0.1 * (1.0 + 0.0 + 0.6))
    assert wise_verified.summarize(rows(records[:2]))["m"]["vistar_overall_partial"] is None  # categories missing


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


def _public_verified(tmp_path):
    root = shared("WISE") / "data_verified"
    folder = tmp_path / "WISE" / "data_verified"
    folder.mkdir(parents=True)
    for name in wise_verified.FILES:
        (folder / name).write_text((root / name).read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def test_odd_records_in_the_public_files_are_read_or_reported(tmp_path):
    folder = _public_verified(tmp_path)
    path = folder / "spatio-temporal_reasoning_verified.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[0]["prompt_id"] = str(data[0]["prompt_id"])          # number as string: read
    data[1]["Category"], data[1]["note"] = "Zeit", "extra"    # other category name, extra key: read (category is by id)
    data[2]["Explanation"] = "Erklärung: 月饼 🥮"               # unicode: read as is
    data[3]["Prompt"] = None                                  # reported
    data[4]["prompt_id"] = data[4]["prompt_id"] + 0.5         # not an integer id: reported, never truncated
    data[5]["prompt_id"] = True                               # reported, never read as 1
    data[6]["prompt_id"] = float(data[6]["prompt_id"])        # 407.0: read
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    items = wise_verified.load_items(tmp_path)
    by_id = {i.id: i for i in items}
    assert len(items) == 997 and len(items.problems) == 3
    assert by_id["401"].category == "time" and by_id["402"].category == "time" and by_id["407"].category == "time"
    assert by_id["403"].explanation == "Erklärung: 月饼 🥮"
    text = "\n".join(items.problems)
    for part in ("record 3: field 'Prompt' missing", "record 4 (prompt_id 405.5): field 'prompt_id' is not an integer",
                 "record 5 (prompt_id True): field 'prompt_id' is not an integer"):
        assert f"spatio-temporal_reasoning_verified.json: {part}" in text, part


def test_other_layouts_of_the_public_files(tmp_path):
    folder = _public_verified(tmp_path)
    (folder / "natural_science_verified.json").unlink()
    (folder / "cultural_common_sense_verified.json").write_text("[{broken", encoding="utf-8")
    items = wise_verified.load_items(tmp_path)
    assert {i.category for i in items} == {"time", "space"} and len(items) == 240
    text = "\n".join(items.problems)
    assert "natural_science_verified.json: not found" in text and "cultural_common_sense_verified.json:1: invalid JSON" in text
    # only the union file of all categories
    union = tmp_path / "union" / "data_verified"
    union.mkdir(parents=True)
    (union / "merge.json").write_text((shared("WISE") / "data_verified" / "merge.json").read_text(encoding="utf-8"), encoding="utf-8")
    merged = wise_verified.load_items(tmp_path / "union")
    assert len(merged) == 1000 and not merged.problems
    # the legacy files in the repository's older data/ layout
    old = tmp_path / "old" / "data"
    old.mkdir(parents=True)
    for name in wise_legacy.FILES:
        (old / name).write_text((shared("WISE") / "WISE_legacy" / "data" / name).read_text(encoding="utf-8"), encoding="utf-8")
    assert len(wise_legacy.load_items(tmp_path / "old")) == 1000
