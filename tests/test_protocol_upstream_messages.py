"""Upstream-exact requests: for one item of each benchmark, the messages and decoding fields vistar sends with
`--upstream` equal, byte for byte, what the benchmark's own script sends for the same item and image (the script
run from the pinned copy in ../shared/data with its network client replaced by a recorder), and vistar reads
the reply as the script does."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.protocol_helpers import shared
from tests.support.upstream_helpers import Recorder, fake_module, load_module, upstream_dir
from vistar.vlm.client import build_messages, request_body
from vistar.vlm.config import JudgeConfig
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.protocols import PROTOCOLS, genexam, phybench
from vistar.vlm.protocols.stage import _request

CFG = JudgeConfig(url="http://judge.invalid/v1", model="judge-model")


def pixels(seed: int = 0, shape=(300, 420)) -> np.ndarray:
    """A textured image (a flat one would hide a wrong resize or colour conversion)."""
    return np.random.default_rng(seed).integers(0, 256, (*shape, 3), dtype=np.uint8)


BIG = (900, 1300)  # larger than GenExam's 768-pixel resize


def sent(suite: str, item, query, image, source=None):
    """vistar's request for the query about IMAGE decoded from file SOURCE: (messages, decoding fields besides
    model and messages)."""
    req = _request(PROTOCOLS[suite], item.id, query, query.encode(image, source) if query.encode else None, "sha",
                   PROTOCOLS[suite].upstream)
    messages = build_messages(req)
    body = request_body(CFG, req, messages)
    return messages, {k: v for k, v in body.items() if k not in ("model", "messages")}


@pytest.mark.parametrize("suite,file", [("wise-verified", "vllm_eval.py"), ("wise-legacy", "WISE_legacy/gpt_eval.py")])
def test_wise_messages_and_decoding_are_the_scripts(tmp_path, suite, file):
    up = upstream_dir("WISE")
    item = PROTOCOLS[suite].load_items(shared("WISE"))[41]
    query = PROTOCOLS[suite].upstream.queries(up, item)[0]
    image_file = tmp_path / f"{item.id}.png"
    image_file.write_bytes(_png(pixels()))
    messages, decoding = sent(suite, item, query, pixels(), image_file)  # the file's bytes, as the script sends them

    reply = "Score: 1" if suite == "wise-verified" else "Consistency: 2\nRealism: 1\nAesthetic Quality: 0"
    recorder = Recorder(reply)
    legacy = fake_module("openai", ChatCompletion=type("CC", (), {"create": staticmethod(
        lambda **kw: recorder.calls.append(kw) or {"choices": [{"message": {"content": reply}}]})}))
    script = load_module(up / file, requests=fake_module("requests", post=recorder.post), openai=legacy)
    data = "data_verified/cultural_common_sense_verified.json" if suite == "wise-verified" else "WISE_legacy/data/cultural_common_sense.json"
    record = script.load_prompts(str(shared("WISE") / data))[int(item.id)]
    result = script.evaluate_image(int(item.id), record, str(image_file),
                                   {"api_base": "http://judge.invalid/v1", "api_key": "", "model": "judge-model", "timeout": 1})
    (call,) = recorder.calls
    assert call.pop("messages") == messages
    assert {k: v for k, v in call.items() if k != "model"} == decoding
    expected = {k: v for k, v in result["score"].items() if k not in ("prompt_id", "Subcategory")}
    assert {k: float(v) for k, v in query.parse(reply).items() if k != "reason"} == expected


def test_genexam_messages_images_and_decoding_are_the_scripts(tmp_path):
    up = upstream_dir("GenExam")
    item = PROTOCOLS["genexam"].load_items(shared("GenExam"))[3]
    gt_file = tmp_path / "gt.png"
    gt_file.write_bytes(_png(pixels(1, (1000, 700))))
    query = PROTOCOLS["genexam"].upstream.queries(up, item, ground_truth=gt_file.read_bytes())[0]
    gen_file = tmp_path / "gen.png"
    gen_file.write_bytes(_png(pixels(0, BIG)))
    messages, decoding = sent("genexam", item, query, pixels(0, BIG), gen_file)

    answers = [{"reasoning": "r", "answer": k % 2} for k in range(len(item.points))]
    reply = ("Here:\n```json\n" + json.dumps({"description": "d", "answers": answers, "global_evaluation": {
        "Spelling": {"reasoning": "r", "score": 2}, "Clarity and Readability": {"reasoning": "r", "score": 1},
        "Logical Consistency": {"reasoning": "r", "score": 2}}}) + "\n```")
    recorder = Recorder(reply)
    script = load_module(up / "run_eval.py", requests=fake_module("requests", post=recorder.post,
                                                                  exceptions=fake_module("e", RequestException=OSError)))
    result = script.eval_single(str(gen_file), str(gt_file), item.prompt, [q for q, _ in item.points])
    (call,) = recorder.calls
    assert call.pop("messages") == messages
    assert call.pop("model") == "gpt-5-2025-08-07"  # the script's model; vistar sends the judge model the user names
    assert call == decoding
    parsed = query.parse(reply)
    assert parsed["points"] == [a["answer"] for a in result["answers"]]
    assert (parsed["spelling"], parsed["readability"], parsed["logic"]) == (2, 1, 2)


def test_genexam_reply_reading_follows_run_eval():
    parse = genexam.upstream_parser(2)
    ge = "'global_evaluation': {'Spelling': {'score': 2,}, 'Clarity and Readability': {'score': 1,}, 'Logical Consistency': {'score': 0,},}"
    # the prompt's own format has trailing commas: json.loads fails, the Python-literal fallback reads it
    assert parse("{'answers': [{'answer': 1}, {'answer': 0}], " + ge + "}") == {"points": [1, 0], "spelling": 2,
                                                                                 "readability": 1, "logic": 0}
    for bad in ("{'answers': [{'answer': 1}], " + ge + "}", "{'answers': [{'answer': 2}, {'answer': 0}], " + ge + "}",
                '{"answers": [{"answer": 1}, {"answer": 0}]}', "no json at all"):
        with pytest.raises(ReplyFormatError):
            parse(bad)


REPLIES = ["(C)", "The answer is (B).", "B)", "A", "I think it is Tencent Holdings", "(Also) none", "", "D.", "(a)", "E", "xyz"]


def test_unieval_question_is_sent_verbatim_and_answers_read_by_check_answer():
    up = upstream_dir("UniEval")
    raw = json.loads((shared("UniEval") / "uni_bench.json").read_text())[0]
    item = PROTOCOLS["unieval"].load_items(shared("UniEval"))[0]
    script = load_module(up / "uni_eval.py", torch=fake_module("torch"), numpy=fake_module("numpy"))
    queries = PROTOCOLS["unieval"].upstream.queries(up, item)
    messages, _ = sent("unieval", item, queries[0], pixels())
    assert messages[0]["content"][0] == {"type": "text", "text": raw["QAs"][0]["question"]}
    for query, qa in zip(queries, raw["QAs"]):
        options = [_.split(',')[0] for _ in qa['question'].split('\n')[1].split(') ')[1:]]
        for reply in REPLIES:
            _, response = script.check_answer(reply, qa["answer"], options)
            assert query.parse(reply)["letter"] == (response if response in tuple("ABCDE") else None), reply


def test_phybench_criteria_and_grading_messages_are_the_scripts(tmp_path):
    up = upstream_dir("PhyBench")
    item = phybench.PhyItem("Gravity_63", "mechanics", "Gravity", "an elephant and a mouse on a seesaw",
                            "an elephant and a mouse on a seesaw", "the elephant's side is down", None)
    recorder = Recorder("criteria text")
    client = lambda **_: type("C", (), {"chat": type("Chat", (), {"completions": recorder})})()  # noqa: E731
    openai = fake_module("openai", OpenAI=client)
    grading = load_module(up / "GPT_make_grading.py", {"xx": None}, openai=openai)
    grading.process_data({"scene": item.scene, "normal": item.normal})
    criteria_query = PROTOCOLS["phybench"].upstream.criteria_query(up, item)
    messages, decoding = sent("phybench", item, criteria_query, None)
    (call,) = recorder.calls
    assert call["messages"] == messages and {"max_tokens": call["max_tokens"]} == decoding

    recorder.calls.clear()
    evaluation = load_module(up / "GPT_make_eval.py", {"xx": None}, openai=openai, jsonlines=fake_module("jsonlines"))
    evaluation.extra, evaluation.model, evaluation.time = "", "DALLE3", fake_module("time", sleep=lambda s: None)
    query = PROTOCOLS["phybench"].upstream.queries(up, item, criteria="criteria text")[0]
    image_file = tmp_path / "Gravity_63.png"
    image_file.write_bytes(_png(pixels()))
    evaluation.process_data({"scene": item.scene, "normal": item.normal, "grading": "criteria text", "DALLE3": str(image_file)})
    messages, decoding = sent("phybench", item, query, pixels(), image_file)
    (call,) = recorder.calls
    assert call["messages"] == messages and {"max_tokens": call["max_tokens"]} == decoding


def _png(image: np.ndarray) -> bytes:
    from vistar.vlm.images import png_bytes

    return png_bytes(image, 0)
