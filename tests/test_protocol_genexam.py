"""GenExam: reply validation, strict and relaxed formulas, ground-truth image, per-subject aggregation, importer."""
from __future__ import annotations

import json

import pytest

from tests.support.protocol_helpers import rows, shared
from vistar.engine import registry
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.protocols import genexam
from vistar.vlm.protocols.base import Outcome

# the protocols' metrics, as the registry builds them from their declarations
GENEXAM_RELAXED = registry.metric("genexam.relaxed")
GENEXAM_STRICT = registry.metric("genexam.strict")

ITEM = genexam.ExamItem("Physics_1", "Physics", "Draw a lever.", (("fulcrum?", 0.5), ("labels?", 0.3), ("forces?", 0.2)), None)


def test_parser_validates_counts_values_and_globals():
    parse = genexam.make_parser(3)
    assert parse('{"points": [1, 0, 1], "spelling": 2, "readability": 1, "logic": 2}') == \
        {"points": [1, 0, 1], "spelling": 2, "readability": 1, "logic": 2}
    for bad, problem in [('{"points": [1, 0], "spelling": 2, "readability": 1, "logic": 2}', "2 answers but there are 3"),
                         ('{"points": [1, 2, 0], "spelling": 2, "readability": 1, "logic": 2}', "answer 2 must be true or false"),
                         ('{"points": [1, "maybe", 0], "spelling": 2, "readability": 1, "logic": 2}', "answer 2 must be true or false"),
                         ('{"points": [1, 0, 0], "spelling": 2, "readability": 1}', "missing 'logic'"),
                         ('{"points": [1, 0, 0], "spelling": 3, "readability": 1, "logic": 2}', "'spelling'"),
                         ('{"points": "all", "spelling": 2, "readability": 1, "logic": 2}', "must be a list")]:
        with pytest.raises(ReplyFormatError, match=problem):
            parse(bad)


def test_parser_reads_other_judges_spellings_and_the_benchmarks_own_format():
    parse = genexam.make_parser(3)
    expected = {"points": [1, 0, 1], "spelling": 2, "readability": 1, "logic": 2}
    for reply in ('```json\n{"points": [true, false, true], "Spelling": "2", "Readability": "1/2", "Logic": 2,}\n```',
                  "{'points': ['1', '0', 'yes'], 'spelling': 2, 'readability': 1, 'logic': 2}",
                  # cal_score.py's eval result: answers as objects, globals nested under global_evaluation
                  ('{"answers": [{"question": "a", "answer": 1}, {"question": "b", "answer": 0}, {"question": "c", "answer": 1}],'
                   ' "global_evaluation": {"Spelling": {"score": 2}, "Clarity and Readability": {"score": 1},'
                   ' "Logical Consistency": {"score": 2}}}')):
        assert parse(reply) == expected, reply
    for bad, problem in [('{"points": [1, 0, 1], "spelling": 2, "readability": "1/3", "logic": 2}', "0-3 scale"),
                         ('{"points": [1, 0, 1], "spelling": 1.5, "readability": 1, "logic": 2}', "'spelling' must be an integer"),
                         ('{"points": [1, 0, 1], "spelling": 2, "readab', "cut off")]:
        with pytest.raises(ReplyFormatError, match=problem):
            parse(bad)


def test_strict_and_relaxed_by_hand():
    partial = {"points": [1, 0, 1], "spelling": 2, "readability": 1, "logic": 2}
    assert genexam.scores(ITEM, partial) == pytest.approx({"strict": 0.0, "relaxed": 0.7 * 0.7 + 0.1 * (1 + 0.5 + 1)})
    perfect = {"points": [1, 1, 1], "spelling": 2, "readability": 2, "logic": 2}
    assert genexam.scores(ITEM, perfect) == pytest.approx({"strict": 1.0, "relaxed": 1.0})
    almost = {**perfect, "logic": 1}
    assert genexam.scores(ITEM, almost)["strict"] == 0.0
    outcome = Outcome("genexam", ITEM, {"exam": partial}, {"extra_images": {"exam": 1}})
    strict = GENEXAM_STRICT.fn({"judge.genexam": outcome}, {}, {}, None)
    relaxed = GENEXAM_RELAXED.fn({"judge.genexam": outcome}, {}, {}, None)
    assert strict.score == 0.0 and relaxed.score == pytest.approx(0.74)
    assert relaxed.details["ground_truth_image"] is True and relaxed.details["subject"] == "Physics"


def test_ground_truth_image_is_sent_when_present(tmp_path):
    item = genexam.ExamItem("Physics_1", "Physics", "Draw.", (("a?", 1.0),), "Physics/Physics_1.png")
    assert genexam.queries(item, data_dir=tmp_path)[0].extra_images == ()
    (tmp_path / "data" / "images" / "Physics").mkdir(parents=True)
    (tmp_path / "data" / "images" / "Physics" / "Physics_1.png").write_bytes(b"png-bytes")
    query = genexam.queries(item, data_dir=tmp_path)[0]
    assert query.extra_images == (b"png-bytes",) and "1. a? (weight 1)" in query.user


def test_relaxed_is_rounded_like_the_benchmark():
    item = genexam.ExamItem("Math_1", "Mathematics", "Draw.", (("a?", 0.1234), ("b?", 0.8766)), None)
    answer = {"points": [1, 0], "spelling": 2, "readability": 1, "logic": 0}
    # cal_score.py: round(0.7·0.1234 + 0.1·2/2 + 0.1·1/2 + 0.1·0/2, 3) = round(0.23638, 3)
    assert genexam.scores(item, answer) == {"strict": 0.0, "relaxed": 0.236}


def test_pooled_and_subject_averaged_overalls_are_both_reported_and_named():
    recs = [{"model": "m", "prompt_id": p, "metric": "genexam.relaxed", "score": s, "details": {"subject": subj}}
            for p, s, subj in [("a", 1.0, "Physics"), ("b", 0.5, "Physics"), ("c", 0.0, "Music")]]
    out = genexam.summarize(rows(recs))["m"]["genexam.relaxed"]
    # cal_score.py's Average pools the exams: (1 + 0.5 + 0) / 3; the subject average is (0.75 + 0.0) / 2
    assert out["subjects"] == pytest.approx({"Physics": 0.75, "Music": 0.0})
    assert out["overall"] == out["pooled"] == pytest.approx(0.5) and out["printed"] == "50.0%"
    assert out["subject_averaged"] == pytest.approx(0.375) and "not in cal_score.py" in out["subject_averaged_rule"]


def test_importer_on_the_public_data():
    items = genexam.load_items(shared("GenExam"))
    assert len(items) == 1000 and not items.problems
    assert len({i.subject for i in items}) == 10
    assert all(abs(sum(w for _, w in i.points) - 1) < 1e-3 for i in items)


def test_bad_lines_are_reported(tmp_path):
    folder = tmp_path / "data" / "annotations"
    folder.mkdir(parents=True)
    good = {"id": "Music_1", "prompt": "Draw a stave.", "scoring_points": [{"question": "q", "score": 1.0}]}
    lines = [json.dumps(good), "{not json", json.dumps({**good, "id": "Music_2", "scoring_points": [{"question": "q", "score": 0.4}]}),
             json.dumps({"prompt": "no id"}), json.dumps({**good, "prompt": "Draw two staves."}), json.dumps(good)]
    (folder / "Music.jsonl").write_text("\n".join(lines) + "\n")
    items = genexam.load_items(tmp_path)
    assert [i.id for i in items] == ["Music_1"]
    text = "\n".join(items.problems)
    assert "Music.jsonl:2: invalid JSON" in text and "Music.jsonl:3 (id Music_2): field 'scoring_points'" in text
    assert "Music.jsonl:4: fields 'id' (string) and 'prompt'" in text
    assert "Music.jsonl:5: field 'id': 'Music_1' was already read from Music.jsonl:1 with other content" in text
    assert len(items.problems) == 4  # line 6 repeats line 1 exactly: read once, nothing lost


def test_the_combined_file_and_odd_fields(tmp_path):
    """Upstream's run_eval.py reads annotations/All_Subjects.jsonl: beside the per-subject files an exam found in
    both is read once (a differing copy is reported), and subjects come from the record, not the file name."""
    public = shared("GenExam") / "data" / "annotations"
    folder = tmp_path / "data" / "annotations"
    folder.mkdir(parents=True)
    music = [json.loads(line) for line in (public / "Music.jsonl").read_text(encoding="utf-8").splitlines()]
    physics = [json.loads(line) for line in (public / "Physics.jsonl").read_text(encoding="utf-8").splitlines()]
    music[0]["scoring_points"][0]["score"] = str(music[0]["scoring_points"][0]["score"])  # number as text: read
    music[1]["prompt"] += " — Notenschlüssel ♪"                                           # unicode: read
    music[1]["img_type"], music[1]["new_field"] = None, {"x": 1}                         # odd extras: read
    music[2]["scoring_points"][0]["question"] = None                                      # reported
    music[3]["scoring_points"][0]["score"] = True                                         # reported, never read as 1
    music[4]["image_path"] = 17                                                           # read, no reference image
    (folder / "Music.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in music) + "\n", encoding="utf-8")
    combined = [{**physics[0], "subject": "Physics"}, physics[1], music[0], {**music[5], "prompt": "edited"}]
    (folder / "All_Subjects.jsonl").write_text("\ufeff" + "\n".join(map(json.dumps, combined)) + "\n", encoding="utf-8")
    items = genexam.load_items(tmp_path)
    by_id = {i.id: i for i in items}
    assert len(items) == len(music) - 2 + 2 and len(items.problems) == 3  # music[0] read once, music[5] conflicts
    assert {by_id[physics[0]["id"]].subject, by_id[physics[1]["id"]].subject} == {"Physics"}
    assert by_id[music[5]["id"]].prompt == "edited"  # All_Subjects.jsonl sorts first
    assert {i.subject for i in items} == {"Physics", "Music"}
    assert by_id[music[1]["id"]].prompt.endswith("Notenschlüssel ♪") and by_id[music[4]["id"]].image_path is None
    text = "\n".join(items.problems)
    assert f"Music.jsonl:6: field 'id': '{music[5]['id']}' was already read from All_Subjects.jsonl:4 with other content" in text
    assert "Music.jsonl:1:" not in text
    assert f"Music.jsonl:3 (id {music[2]['id']}): field 'scoring_points'" in text
    assert f"Music.jsonl:4 (id {music[3]['id']}): field 'scoring_points'" in text
