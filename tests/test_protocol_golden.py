"""Golden runs: hand-written judge replies (tests/golden_replies.json) go through vistar — the upstream-exact
reading of each reply, the protocol's metric, the benchmark summary — and through the benchmark's own code from
the pinned copy in ../shared/data (its reply reading and its aggregation script, run as its authors run them).
The numbers must agree to the precision the benchmark prints, for a complete run and for one with missing
images. PhyBench publishes no aggregation code, so its expectation is computed by hand in the fixture."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support.protocol_helpers import shared
from tests.support.upstream_helpers import Recorder, fake_module, load_module, upstream_dir
from vistar.engine import registry
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.images import png_bytes
from vistar.vlm.protocols import PROTOCOLS, aggregate, genexam, phybench, unieval
from vistar.vlm.protocols.base import Outcome

# the protocols' metrics, as the registry builds them from their declarations
GENEXAM_RELAXED = registry.metric("genexam.relaxed")
GENEXAM_STRICT = registry.metric("genexam.strict")
PHYBENCH_PHY = registry.metric("phybench.phy")
PHYBENCH_SCENE = registry.metric("phybench.scene")
UNISCORE = registry.metric("uniscore")
WISCORE_LEGACY = registry.metric("wiscore.legacy")
WISCORE_VERIFIED = registry.metric("wiscore.verified")

GOLDEN = json.loads((Path(__file__).parent / "golden_replies.json").read_text(encoding="utf-8"))
METRICS = {"wise-verified": [WISCORE_VERIFIED], "wise-legacy": [WISCORE_LEGACY], "genexam": [GENEXAM_STRICT, GENEXAM_RELAXED],
           "unieval": [UNISCORE], "phybench": [PHYBENCH_PHY, PHYBENCH_SCENE]}


def vistar_rows(suite: str, judged: list[tuple[object, str, dict]]) -> pd.DataFrame:
    """scores.parquet rows as the engine writes them: (item, prompt id of the image, parsed answers or a
    ReplyFormatError) -> one row per metric, `error` when the reply could not be read."""
    out = []
    for item, pid, answers in judged:
        for metric in METRICS[suite]:
            if isinstance(answers, Exception):
                out.append({"model": "m", "prompt_id": pid, "metric": metric.name, "score": None, "status": "error", "details": ""})
                continue
            res = metric.fn({f"judge.{suite}": Outcome(suite, item, answers)}, {}, {}, None)
            out.append({"model": "m", "prompt_id": pid, "metric": metric.name, "score": res.score, "status": res.status,
                        "details": json.dumps(res.details)})
    return pd.DataFrame(out)


def read(query, text: str):
    """The reply as vistar's upstream-exact client reads it (the script's cleanup, then its parser)."""
    try:
        return {query.qid: query.parse(query.wire.clean(text) if query.wire.clean else text)}
    except ReplyFormatError as exc:
        return exc


# --- WISE --------------------------------------------------------------------------------------------------------

WISE = {"wise-verified": ("vllm_eval.py", "calculate_verified.py", "data_verified/merge.json"),
        "wise-legacy": ("WISE_legacy/gpt_eval.py", "WISE_legacy/Calculate.py", None)}


def wise_run(suite: str, tmp_path, missing: set[int], unreadable: set[int]):
    up = upstream_dir("WISE")
    items = {int(i.id): i for i in PROTOCOLS[suite].load_items(shared("WISE"))}
    replies = GOLDEN[suite]
    text = {pid: GOLDEN["wise-unreadable"][suite] if pid in unreadable else replies[(pid * 7) % len(replies)]
            for pid in items if pid not in missing}
    # vistar
    judged = []
    for pid, reply in text.items():
        query = PROTOCOLS[suite].upstream.queries(up, items[pid])[0]
        judged.append((items[pid], str(pid), read(query, reply)))
    summary = aggregate.summarize(suite, vistar_rows(suite, judged))["m"]
    # upstream: its client cleanup and extract_scores per reply, its scores .jsonl, its calculate script
    script_file, calc_file, _ = WISE[suite]
    recorder = Recorder()
    script = load_module(up / script_file, requests=fake_module("requests", post=recorder.post), openai=fake_module("openai"))
    lines = []
    for pid, reply in text.items():
        if suite == "wise-verified":
            recorder.reply = reply
            reply = script._chat_completion_via_vllm([], {"api_base": "x", "api_key": "", "model": "m", "timeout": 1})
        scores = script.extract_scores(reply)
        if script.REQUIRED_SCORE_KEYS.issubset(scores):  # else the script records an extraction failure, no score
            lines.append(json.dumps({"prompt_id": pid, "Subcategory": items[pid].subcategory, **scores}))
    scores_file = tmp_path / f"{suite}_scores.jsonl"
    scores_file.write_text("\n".join(lines) + "\n")
    calc = load_module(up / calc_file)
    return summary, calc, scores_file


def run_main(module, argv: list[str], capsys) -> str:
    saved = sys.argv
    sys.argv = ["calc", *argv]
    try:
        module.main()
    finally:
        sys.argv = saved
    return capsys.readouterr().out


@pytest.mark.parametrize("suite", list(WISE))
def test_wise_complete_run_equals_the_upstream_script_to_printed_precision(tmp_path, capsys, suite):
    summary, calc, scores_file = wise_run(suite, tmp_path, set(), set())
    printed = run_main(calc, [str(scores_file)], capsys)
    table = printed.strip().splitlines()[-1].split()   # Cultural Time Space Biology Physics Chemistry Overall
    ours = summary["printed"]
    assert table == [ours["categories"][c] for c in ("CULTURE", "TIME", "SPACE", "BIOLOGY", "PHYSICS", "CHEMISTRY")] + [ours["overall"]]
    assert f"Overall WiScore: {ours['overall']}" in printed and summary["missing_ids"] == 0


@pytest.mark.parametrize("suite", list(WISE))
def test_wise_with_missing_images_gives_no_overall_like_the_upstream_script(tmp_path, capsys, suite):
    summary, calc, scores_file = wise_run(suite, tmp_path, missing={5, 450, 999}, unreadable={12})
    printed = run_main(calc, [str(scores_file)], capsys)
    assert "Aborting overall evaluation" in printed and "Overall WiScore:" not in printed
    assert summary["overall"] is None and summary["printed"]["overall"] is None
    assert summary["missing_ids"] == 4  # three images missing, one reply the script cannot read
    assert summary["vistar_overall_partial"] is not None  # vistar's earlier choice, kept under its own name


# --- GenExam -------------------------------------------------------------------------------------------------------

def genexam_reply(entry: dict) -> str:
    spelling, readability, logic = entry["globals"]
    body = json.dumps({"description": "...", "answers": [{"reasoning": "...", "answer": int(a)} for a in entry["answers"]],
                       "global_evaluation": {"Spelling": {"reasoning": "...", "score": spelling},
                                             "Clarity and Readability": {"reasoning": "...", "score": readability},
                                             "Logical Consistency": {"reasoning": "...", "score": logic}}}, indent=4)
    return f"```json\n{body}\n```" if entry["fence"] else body


@pytest.mark.parametrize("missing", [[], GOLDEN["genexam-missing-images"]])
def test_genexam_pooled_score_equals_cal_score(tmp_path, capsys, missing):
    up = upstream_dir("GenExam")
    items = {i.id: i for i in PROTOCOLS["genexam"].load_items(shared("GenExam"))}
    records = {json.loads(line)["id"]: json.loads(line) for path in sorted((shared("GenExam") / "data" / "annotations").glob("*.jsonl"))
               for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    judged_ids = [i for i in GOLDEN["genexam"] if i not in missing]
    image = tmp_path / "image.png"
    image.write_bytes(png_bytes(np.full((64, 64, 3), 200, np.uint8)))
    # vistar
    judged = []
    for item_id in judged_ids:
        query = PROTOCOLS["genexam"].upstream.queries(up, items[item_id], ground_truth=image.read_bytes())[0]
        judged.append((items[item_id], item_id, read(query, genexam_reply(GOLDEN["genexam"][item_id]))))
    summary = genexam.summarize(vistar_rows("genexam", judged), list(items.values()))["m"]
    # upstream: run_eval.eval_single reads each reply, the result files as inference_and_eval_single writes them,
    # cal_score.calculate_score over the folder
    recorder = Recorder()
    run_eval = load_module(up / "run_eval.py", requests=fake_module("requests", post=recorder.post))
    results = tmp_path / "eval_results"
    results.mkdir()
    for item_id in judged_ids:
        recorder.reply = genexam_reply(GOLDEN["genexam"][item_id])
        data = records[item_id]
        result = run_eval.eval_single(str(image), str(image), data["prompt"], [p["question"] for p in data["scoring_points"]])
        result.update(data)
        (results / f"{item_id}.json").write_text(json.dumps(result))
    cal = load_module(up / "cal_score.py")
    theirs = cal.calculate_score(str(results))
    printed = capsys.readouterr().out
    for metric, key in (("genexam.strict", "strict"), ("genexam.relaxed", "relaxed")):
        ours = summary[metric]
        assert f"Average {key} score: {ours['printed']}" in printed
        assert ours["pooled"] == pytest.approx(theirs[f"{key}_score"], abs=1e-12)
        assert ours["missing"] == 1000 - len(judged_ids)
        assert ours["subject_averaged"] == pytest.approx(sum(ours["subjects"].values()) / len(ours["subjects"]))


# --- UniEval -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("missing", [[], GOLDEN["unieval-missing-images"]])
def test_unieval_scores_equal_uni_eval_statistics(missing):
    up = upstream_dir("UniEval")
    bench = json.loads((shared("UniEval") / "uni_bench.json").read_text(encoding="utf-8"))[:9]
    items = PROTOCOLS["unieval"].load_items(shared("UniEval"))[:9]
    replies, samples = GOLDEN["unieval"], 2
    lost = {tuple(m) for m in missing}

    def reply_for(p: int, k: int, q: int) -> str:
        return replies[(p * 5 + k * 3 + q) % len(replies)]

    # vistar: one row per existing image, answers read by the upstream-exact parser
    judged = []
    for p, item in enumerate(items):
        queries = PROTOCOLS["unieval"].upstream.queries(up, item)
        for k in range(samples):
            if (p, k) not in lost:
                answers = {q.qid: q.parse(reply_for(p, k, n)) for n, q in enumerate(queries)}
                judged.append((item, item.id, answers))
    ours = unieval.summarize(vistar_rows("unieval", judged), items)["m"]
    # upstream: uni_eval with a generator that fails ('' image) where the image is missing
    script = load_module(up / "uni_eval.py", torch=fake_module("torch"), numpy=fake_module("numpy"))
    by_question = {(p, qa["question"]): n for p, it in enumerate(bench) for n, qa in enumerate(it["QAs"])}
    state = {"p": -1}

    def generate(prompt, num, temp):
        state["p"] += 1
        return [f"{state['p']}/{k}" if (state["p"], k) not in lost else "" for k in range(num)]

    def understand(img, question):
        p, k = map(int, img.split("/"))
        return reply_for(p, k, by_question[(p, question)])

    records = script.uni_eval(generate, understand, bench, save_path="", img_num=samples)
    theirs = script.statistics(records, bench)
    assert ours["uniscore"] == theirs["tag-L1-UniScore"]
    assert {k.split(" / ")[-1]: v for k, v in ours["l1"].items()} == theirs["tag-L1"]
    assert ours["l0"] == theirs["tag-L0"]
    assert {k.split(" / ")[-1]: v for k, v in ours["l2"].items()} == theirs["tag-L2"]
    assert ours["case_score"] == theirs["case-UniScore"] and ours["prompts_all_right"] == theirs["UniScoreA"]
    assert ours["invalid_rate"] == theirs["response-statistics"]["Invalid"]
    assert ours["missing_answers"] == sum(len(items[p].qas) for p, _ in lost)


# --- PhyBench ------------------------------------------------------------------------------------------------------

def test_phybench_per_category_means_as_computed_by_hand():
    """The upstream repository stores the replies and aggregates nothing; the fixture's expectation is computed
    by hand from the replies (paper categories, chemistry and physical properties apart)."""
    entries, expected = GOLDEN["phybench"], GOLDEN["phybench-expected"]
    items = [phybench.PhyItem(e["id"], e["category"], "", "p", "p", "n", "criteria") for e in entries]
    judged = [(item, item.id, {"grade": phybench.parse(e["reply"])}) for item, e in zip(items, entries) if e["reply"] is not None]
    out = phybench.summarize(vistar_rows("phybench", judged), items)["m"]
    assert out["phybench.phy"]["raw_categories"] == pytest.approx(expected["phy"])
    assert out["phybench.scene"]["raw_categories"] == pytest.approx(expected["scene"])
    assert out["phybench.phy"]["missing"] == out["phybench.scene"]["missing"] == expected["missing"]
