"""PhyBench: importer for the public JSON layout (hand-written files), criteria stage, parser, aggregation."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.support.phybench_files import GRADING, write_phybench
from tests.support.protocol_helpers import rows
from tests.support.upstream_helpers import upstream_dir
from vistar.engine import registry
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.protocols import PROTOCOLS, phybench
from vistar.vlm.protocols.base import Outcome
from vistar.vlm.protocols.stage import _criteria
from vistar.vlm.types import JudgeReply

# the protocols' metrics, as the registry builds them from their declarations
PHYBENCH_PHY = registry.metric("phybench.phy")
PHYBENCH_SCENE = registry.metric("phybench.scene")

def test_importer_reads_the_public_layout(tmp_path):
    items = phybench.load_items(write_phybench(tmp_path / "PhyBench"))
    by_id = {i.id: i for i in items}
    assert sorted(by_id) == ["Friction_0", "Gravity_0", "Gravity_1", "Refraction_0", "misc_0"]
    assert by_id["Gravity_0"].criteria == GRADING and by_id["Gravity_1"].criteria is None
    assert by_id["Friction_0"].scene == "a ball on a slope" and by_id["Gravity_0"].scene == by_id["Gravity_0"].prompt
    assert {i.category for i in items} == {"mechanics", "optics", "thermodynamics"}
    text = "\n".join(items.problems)
    assert "force.json: item 3 (Gravity_2): fields 'prompt' and 'normal'" in text
    assert "misc.json: item 1 (misc_1): field 'category' missing" in text
    assert phybench.load_items(tmp_path)[0].id == items[0].id  # a folder containing PhyBench/ works too


def test_the_benchmarks_file_names_and_odd_records(tmp_path):
    folder = tmp_path / "json_all"
    folder.mkdir()
    # the public json_all/: chem.json and wuli.json (physical properties) are the two material categories
    (folder / "wuli.json").write_text(json.dumps([
        {"prompt": "an iron block", "normal": "it is silver-white", "grading": GRADING, "law": "color", "DALLE3": "/x/color_0.png"},
        {"prompt": "a copper block", "normal": None, "law": "color"},                 # unusable, but still color_1
        {"prompt": "a gold block", "normal": "it is yellow", "law": "color"},
        {"prompt": "ein Eisblock ❄", "normal": "it floats", "law": 7, "category": "Material Properties"}]), encoding="utf-8")
    (folder / "chem.json").write_text('[{"prompt": "a candle in a vacuum jar", "normal": "it goes out", "law": "Combustion-supporting"}]')
    (folder / "broken.json").write_text('[{"prompt": ')
    items = phybench.load_items(folder)
    by_id = {i.id: i for i in items}
    # ids follow the image names (law_n counts every record of the law), so color_2 stays the gold block
    assert sorted(by_id) == ["7_0", "Combustion-supporting_0", "color_0", "color_2"]
    assert by_id["color_2"].prompt == "a gold block" and by_id["7_0"].prompt == "ein Eisblock ❄"
    assert {i.id: i.category for i in items} == {"7_0": "material-physics", "Combustion-supporting_0": "material-chemistry",
                                                  "color_0": "material-physics", "color_2": "material-physics"}
    text = "\n".join(items.problems)
    assert "wuli.json: item 1 (color_1): fields 'prompt' and 'normal'" in text and "broken.json" in text and "file skipped" in text
    assert len(items) + len(items.problems) == 4 + 1 + 1  # every record imported or reported, the broken file too


def test_criteria_are_asked_only_when_the_item_has_none(tmp_path):
    items = {i.id: i for i in phybench.load_items(write_phybench(tmp_path))}
    assert phybench.criteria(items["Gravity_0"]) is None
    stage1 = phybench.criteria(items["Gravity_1"])
    assert not stage1.with_image and "the boulder side is down" in stage1.user
    with pytest.raises(ValueError, match="no scoring criteria"):
        phybench.queries(items["Gravity_1"])
    assert "seesaw with both animals" in phybench.queries(items["Gravity_0"])[0].user
    assert "my criteria" in phybench.queries(items["Gravity_1"], criteria="my criteria")[0].user
    with pytest.raises(ReplyFormatError):
        phybench.parse_criteria("Looks fine.")
    assert phybench.parse_criteria(" Scene score: 2 if...\nPhysics score: 3 if ... ").startswith("Scene")


def test_grade_parser_accepts_the_official_python_dict_style():
    assert phybench.parse("{'scene_score': 2, 'phy_score': 1, 'scene_reason': 'ok', 'phy_reason': 'tilted'}") == {"scene": 2, "phy": 1}
    assert phybench.parse('```json\n{"scene_score": 0, "phy_score": 3}\n```') == {"scene": 0, "phy": 3}
    for bad in ("{'scene_score': 2, 'phy_score': 4}", "{'scene_score': 2}", "scene 2 physics 3"):
        with pytest.raises(ReplyFormatError):
            phybench.parse(bad)


def test_metrics_and_per_category_aggregation():
    item = phybench.PhyItem("Gravity_0", "mechanics", "Gravity", "p", "p", "n", GRADING)
    outcome = Outcome("phybench", item, {"grade": {"scene": 1, "phy": 2}})
    assert PHYBENCH_PHY.fn({"judge.phybench": outcome}, {}, {}, None).score == pytest.approx(2 / 3)
    assert PHYBENCH_SCENE.fn({"judge.phybench": outcome}, {}, {}, None).score == pytest.approx(0.5)
    recs = [{"model": "m", "prompt_id": p, "metric": "phybench.phy", "score": s, "details": {"category": c}}
            for p, s, c in [("a", 1.0, "mechanics"), ("b", 1 / 3, "mechanics"), ("c", 0.0, "optics")]]
    out = phybench.summarize(rows(recs))["m"]["phybench.phy"]
    assert out["categories"] == pytest.approx({"mechanics": 2 / 3, "optics": 0.0})
    assert out["overall"] == pytest.approx(1 / 3)  # mean over categories, not over images


def test_ids_follow_the_image_each_record_names_when_a_law_comes_back_later_in_its_file(tmp_path):
    """The public force.json lists a law's records in two runs; their images are numbered by place in the
    original file (Gravity_63.. for the second run), which a per-law counter (Gravity_21..) misses."""
    records = [{"prompt": f"gravity {k}", "normal": "falls", "law": "Gravity", "DALLE3": f"/imgs/dalle3/Gravity_{k}.png",
                "SDXL": f"/imgs/sdxl/Gravity_{k}.png"} for k in (0, 1)]
    records += [{"prompt": "friction", "normal": "slows", "law": "Friction", "DALLE3": "/imgs/dalle3/Friction_0.png"}]
    records += [{"prompt": f"gravity {k}", "normal": "falls", "law": "Gravity", "DALLE3": f"C:\\imgs\\Gravity_{k}.jpg"} for k in (3, 4)]
    records += [{"prompt": "no image field", "normal": "floats", "law": "Buoyancy"},
                {"prompt": "two images", "normal": "tilts", "law": "Lever", "A": "a/Lever_9.png", "B": "b/Lever_8.png"}]
    (tmp_path / "force.json").write_text(json.dumps(records))
    items = phybench.load_items(tmp_path)
    assert [i.id for i in items] == ["Gravity_0", "Gravity_1", "Friction_0", "Gravity_3", "Gravity_4", "Buoyancy_0", "Lever_0"]
    assert items[3].prompt == "gravity 3" and items[5].prompt == "no image field"
    assert items.problems == [f"{tmp_path / 'force.json'}: item 6 (Lever_0): its image fields name different images "
                              "(Lever_8, Lever_9); the id Lever_0 is used"]


def test_items_without_a_score_are_counted_and_categories_stay_apart():
    items = [phybench.PhyItem(p, c, "", "p", "p", "n", GRADING) for p, c in
             [("a", "material-chemistry"), ("b", "material-physics"), ("c", "material-physics"), ("d", "optics")]]
    recs = [{"model": "m", "prompt_id": p, "metric": "phybench.phy", "score": s, "details": {"category": c}}
            for p, s, c in [("a", 1.0, "material-chemistry"), ("b", 1 / 3, "material-physics")]]
    out = phybench.summarize(rows(recs), items)["m"]["phybench.phy"]
    assert out["categories"] == pytest.approx({"material-chemistry": 1.0, "material-physics": 1 / 3})
    assert out["raw_categories"] == pytest.approx({"material-chemistry": 3.0, "material-physics": 1.0})
    assert out["missing"] == 2  # c and d have no image (or no answer)


class _EchoJudge:
    """Answers each criteria question with criteria naming the template family that asked it."""

    def ask(self, calls, bill=None, ledger=None):
        return [JudgeReply(ok=True, parsed=parse(f"Scene and physics criteria asked under {req.protocol}"))
                for req, parse in calls]


def test_an_item_judged_with_both_template_families_gets_each_familys_criteria():
    item = phybench.PhyItem("Gravity_0", "mechanics", "Gravity", "a ball on a slope", "a ball on a slope",
                            "it rolls down", None)
    upstream = PROTOCOLS["phybench"].upstream
    found = [(item, None, None), (item, upstream, upstream_dir("PhyBench"))]
    got = _criteria(PROTOCOLS["phybench"], _EchoJudge(), SimpleNamespace(judge_ledger=None), found)
    assert got == {("Gravity_0", None): f"Scene and physics criteria asked under {PROTOCOLS['phybench'].key}",
                   ("Gravity_0", upstream): f"Scene and physics criteria asked under phybench@{upstream.version}"}
