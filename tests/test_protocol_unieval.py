"""UniEval: letter extraction rules, case score, tag-hierarchy aggregation and option distribution, importer."""
from __future__ import annotations

import json

import pytest

from tests.support.protocol_helpers import rows, shared
from vistar.engine import registry
from vistar.vlm.protocols import unieval
from vistar.vlm.protocols.base import Outcome

# the protocols' metrics, as the registry builds them from their declarations
UNISCORE = registry.metric("uniscore")

QUESTION = ("Question: What colour is the car?\nOptions: (A) red, (B) Blue Car Inc., (C) green, (D) black, (E) N/A or Unknown\n"
            "Based on the image, answer with the option letter directly in the format (A), (B), (C), (D), or (E).")


@pytest.mark.parametrize("reply,letter", [
    ("(C)", "C"), ("I first thought (A) but the answer is (D).", "D"), ("B)", "B"), ("Answer: C", "C"),
    ("D.", "D"), ("The car is green", "C"), ("blue car inc.", "B"), ("no idea", None), ("", None),
    # check_answer: the last "(X" or "X)" wins, whichever form; otherwise the option text mentioned last
    ("(A) is wrong, the answer is B)", "B"), ("The answer is (C", "C"), ("It is red or green", "C"),
    ("(Also) hard to say", None), ("NONE", None)])
def test_answer_letter_rules(reply, letter):
    assert unieval.answer_letter(reply, unieval.options_of(QUESTION)) == letter


def test_options_are_read_from_the_question():
    assert unieval.options_of(QUESTION) == {"A": "red", "B": "Blue Car Inc.", "C": "green", "D": "black", "E": "N/A or Unknown"}


def test_case_score_and_details():
    options = unieval.options_of(QUESTION)
    qas = (unieval.QA("0", QUESTION, "C", ("Visual", "Colors", "Basic"), options),
           unieval.QA("1", QUESTION, "A", ("Textual", "Nouns", "Names"), options))
    item = unieval.UniItem("7", "a green car", qas)
    answers = {"qa0": unieval.make_parser(qas[0])("(C)"), "qa1": unieval.make_parser(qas[1])("gibberish")}
    res = UNISCORE.fn({"judge.unieval": Outcome("unieval", item, answers)}, {}, {}, None)
    assert res.score == 0.5
    assert [(a["got"], a["correct"]) for a in res.details["answers"]] == [("C", True), (None, False)]
    assert res.details["answers"][1]["reply"] == "gibberish"  # an invalid answer keeps what the judge said


def _answer(tags, correct, got="A"):
    return {"tags": list(tags), "correct": correct, "got": got, "expected": "A", "qa": "0"}


def test_accuracy_per_l2_averaged_into_l1_and_l0_headline_over_l1():
    v_col_basic, v_col_rare, v_style, t_nouns = ("V", "Col", "basic"), ("V", "Col", "rare"), ("V", "Style", "art"), ("T", "Nouns", "org")
    recs = [
        {"model": "m", "prompt_id": "1", "metric": "uniscore", "score": 2 / 3,
         "details": {"answers": [_answer(v_col_basic, True), _answer(v_col_basic, False, "B"), _answer(v_style, True)]}},
        {"model": "m", "prompt_id": "1", "metric": "uniscore", "score": 1.0,
         "details": {"answers": [_answer(v_col_rare, True), _answer(t_nouns, True)]}},
        {"model": "m", "prompt_id": "2", "metric": "uniscore", "score": 0.0,
         "details": {"answers": [_answer(t_nouns, False, None)]}}]
    out = unieval.summarize(rows(recs))["m"]
    # L2: basic 1/2, rare 1, art 1, org 1/2 -> L1: Col 0.75, Style 1, Nouns 0.5 -> L0: V 0.875, T 0.5
    assert out["l1"] == {"V / Col": 0.75, "V / Style": 1.0, "T / Nouns": 0.5}
    assert out["l0"] == {"V": 0.875, "T": 0.5}
    assert out["uniscore"] == round((0.75 + 1.0 + 0.5) / 3, 3) == 0.75
    # case score per prompt over all its images' answers (prompt 1: 4 of 5 right, prompt 2: 0 of 1), then the mean
    # over prompts, as the benchmark's case-UniScore; not the mean over images (2/3 + 1 + 0) / 3
    assert out["case_score"] == round((4 / 5 + 0) / 2, 3)
    assert out["prompts_all_right"] == 0.0  # prompt 1 has one wrong answer on its first image, prompt 2 is wrong
    assert out["invalid_rate"] == round(1 / 6, 3) and out["options"]["A"] == round(4 / 6, 3)


def test_uniscore_averages_the_three_decimal_l1_scores_and_missing_answers_count_as_wrong():
    tags = [("T", f"L1-{k}", "x") for k in range(3)]
    qas = tuple(unieval.QA(str(k), "Q", "A", t, {}) for k, t in enumerate(tags))
    items = [unieval.UniItem("0", "p", qas), unieval.UniItem("1", "p", qas)]
    right = [{"qa": str(k), "tags": list(t), "correct": k != 2, "got": "A" if k != 2 else "B", "expected": "A"}
             for k, t in enumerate(tags)]
    # prompt 0 answered on three images (L1-0: 3/3, L1-1: 3/3, L1-2: 0/3); prompt 1 has no image at all
    recs = [{"model": "m", "prompt_id": "0", "metric": "uniscore", "score": 2 / 3, "details": {"answers": right}}] * 3
    out = unieval.summarize(rows(recs), items)["m"]
    # upstream: prompt 1's three questions count as invalid on as many images as prompt 0 has (3 each)
    assert out["missing_answers"] == 9 and out["invalid_rate"] == round(9 / 18, 3)
    assert out["l1"] == {"T / L1-0": 0.5, "T / L1-1": 0.5, "T / L1-2": 0.0} and out["uniscore"] == 0.333
    assert out["case_score"] == round((2 / 3 + 0) / 2, 3)
    assert out["vistar_observed"]["uniscore"] == pytest.approx(2 / 3) and out["vistar_observed"]["case_score"] == pytest.approx(2 / 3)
    # rounding as uni_eval.py: L1 scores 1/2 and 1/3 print as 0.5 and 0.333, and UniScore is their mean 0.4165
    # rounded (0.416), where the unrounded mean 0.41667 would give 0.417
    answers = [{"qa": "0", "tags": ["T", "a", "x"], "correct": c, "got": "A"} for c in (True, False)]
    answers += [{"qa": "1", "tags": ["T", "b", "x"], "correct": c, "got": "A"} for c in (True, False, False)]
    out = unieval.summarize(rows([{"model": "m", "prompt_id": "0", "metric": "uniscore", "score": 0.4,
                                   "details": {"answers": answers}}]))["m"]
    assert out["l1"] == {"T / a": 0.5, "T / b": 0.333} and out["uniscore"] == 0.416
    assert round(out["vistar_observed"]["uniscore"], 3) == 0.417


def test_importer_on_the_public_data():
    items = unieval.load_items(shared("UniEval"))
    assert len(items) == 1234 and not items.problems
    assert sum(len(i.qas) for i in items) == 4231
    assert all(len(q.options) == 5 and len(q.tags) == 3 for i in items for q in i.qas)


def test_bad_records_are_reported(tmp_path):
    (tmp_path / "uni_bench.json").write_text(
        '[{"prompt": "p", "prompt_id": 0, "QAs": [{"question": "Q? Options: (A) x, (B) y", "answer": "A", "tag": "a, b, c"}]},'
        ' {"prompt": "p", "prompt_id": 1, "QAs": [{"question": "Q", "answer": "Z", "tag": "a, b, c"}]},'
        ' {"prompt_id": 2}]')
    items = unieval.load_items(tmp_path)
    assert [i.id for i in items] == ["0"]
    expected = ["record 1 (prompt_id 1): QAs[0]: field 'answer' must be a letter A-E, got 'Z'",
                "record 1 (prompt_id 1): field 'QAs' has no usable question", "record 2: fields 'prompt' (string) and 'prompt_id'"]
    assert len(items.problems) == 3
    assert all(p.split("uni_bench.json: ")[1].startswith(e) for p, e in zip(items.problems, expected)), items.problems


def test_odd_fields_are_read_or_reported_per_question(tmp_path):
    qa = {"question": "Question: Q?\nOptions: (A) rot, (B) blau, (C) grün, (D) schwarz, (E) N/A", "tag": "Visual, Colors, Basic"}
    (tmp_path / "uni_bench.json").write_text(json.dumps([
        {"prompt": "ein grünes Auto 🚗", "prompt_id": "7", "extra": 1, "QAs": [
            {**qa, "answer": " (c) ", "QA_id": 70},                                        # answer spelled loosely
            {**qa, "answer": "B", "tag": ["Visual", "Colors", "Basic"], "QA_id": 71},       # tag as a list
            {**qa, "answer": "F", "QA_id": 72},                                            # no such option
            {**qa, "answer": "A", "tag": "Visual, Colors", "QA_id": 73},                   # two levels only
            {**qa, "answer": "A", "QA_id": 70}]},                                          # duplicate QA id
        {"prompt": "again", "prompt_id": 7, "QAs": [{**qa, "answer": "A"}]},              # duplicate prompt id
        {"prompt": "p", "prompt_id": None, "QAs": [{**qa, "answer": "A"}]},
        {"prompt": "p", "prompt_id": True, "QAs": [{**qa, "answer": "A"}]}], ensure_ascii=False), encoding="utf-8")
    items = unieval.load_items(tmp_path)
    assert [(i.id, i.prompt) for i in items] == [("7", "ein grünes Auto 🚗")]
    assert [(q.id, q.answer, q.tags) for q in items[0].qas] == [("70", "C", ("Visual", "Colors", "Basic")),
                                                                ("71", "B", ("Visual", "Colors", "Basic"))]
    assert items[0].qas[0].options["C"] == "grün"
    text = "\n".join(items.problems)
    for part in ("record 0 (prompt_id 7): QAs[2]: field 'answer' must be a letter A-E, got 'F'",
                 "record 0 (prompt_id 7): QAs[3]: field 'tag' must name three levels",
                 "record 0 (prompt_id 7): QAs[4]: field 'QA_id': duplicate '70'",
                 "record 1: field 'prompt_id': duplicate '7'", "record 2: fields 'prompt'", "record 3: fields 'prompt'"):
        assert part in text, part


def test_a_question_without_options_is_kept_and_reported(tmp_path):
    (tmp_path / "uni_bench.json").write_text(json.dumps([{"prompt": "p", "prompt_id": 0, "QAs": [
        {"question": "Question: What colour is the car? Answer with a letter.", "answer": "B", "tag": "a, b, c", "QA_id": 5}]}]))
    items = unieval.load_items(tmp_path)
    assert [q.id for q in items[0].qas] == ["5"] and items[0].qas[0].options == {}
    assert items.problems == [f"{tmp_path / 'uni_bench.json'}: record 0 (prompt_id 0): QAs[0]: field 'question' lists no "
                              "'(A) …' options; only replies that give a letter can be read"]
    parse = unieval.make_parser(items[0].qas[0])
    assert parse("(B)") == {"letter": "B"} and parse("the red one")["letter"] is None
