"""UniEval (UniBench): 5-option multiple-choice questions per prompt, several images per prompt.

The answer letter follows the benchmark's `check_answer`: the last `(X` or `X)`, else a trailing letter, else
the option whose text occurs last in the reply; otherwise the answer is invalid and counts as wrong. Accuracy
per L2 tag is averaged into L1 tags and L1 into L0; the headline UniScore is the mean over L1 tags (see
`summarize`).
"""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..images import file_as_is
from ..types import WireFormat
from .aggregate import VISTAR_PARTIAL, each_model, ok_rows
from .base import Family, Items, Outcome, Protocol, Query, make_prompt, read_json
from .upstream_source import function, inner_assignment

NAME, VERSION = "unieval", "2"  # 2: letter extraction as the benchmark's check_answer
LETTERS = "ABCDE"
SYSTEM = "You answer multiple-choice questions about an image. Look at the image carefully."
USER = "{question}"  # the benchmark's own question text already asks for the letter format

_LETTER = re.compile(r"\(([A-E])(?![A-Za-z])|(?<![A-Za-z])([A-E])\)")  # "(C", "C)" or "(C)"
_TRAIL = re.compile(r"(?<![A-Za-z])([A-E])[\s.!)\]]*$")
_OPTION = re.compile(r"\(([A-E])\)\s*(.*?)(?=,\s*\([A-E]\)|\n|$)")


@dataclass(frozen=True)
class QA:
    id: str
    question: str
    answer: str                 # correct letter
    tags: tuple[str, str, str]  # (L0, L1, L2)
    options: dict[str, str]     # letter -> option text


@dataclass(frozen=True)
class UniItem:
    id: str
    prompt: str
    qas: tuple[QA, ...]

    def to_prompt(self):
        return make_prompt(self.id, "IL", "SF", self.prompt, NAME, questions=len(self.qas))


def options_of(question: str) -> dict[str, str]:
    line = next((ln for ln in question.splitlines() if ln.strip().startswith("Options:")), question)
    return {m.group(1): m.group(2).strip().rstrip(",").strip() for m in _OPTION.finditer(line)}


def answer_letter(reply: str, options: dict[str, str]) -> str | None:
    """The protocol's letter extraction; None is an invalid answer."""
    text = reply.strip()
    found = _LETTER.findall(text)
    if found:
        return "".join(found[-1])
    m = _TRAIL.search(text)
    if m:
        return m.group(1)
    lowered = text.lower()
    positions = {k: lowered.rfind(v.lower()) for k, v in options.items() if v}
    last = max(positions, key=positions.get, default=None)
    return last if last is not None and positions[last] >= 0 else None


def load_items(data_dir: str | Path) -> Items:
    path = PROTOCOL.data_root(data_dir) / "uni_bench.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: UniEval benchmark file not found")
    data = read_json(path)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of prompts")
    items, problems, seen = [], [], set()
    for n, rec in enumerate(data):
        where = f"{path}: record {n}"
        pid = rec.get("prompt_id") if isinstance(rec, dict) else None
        if not isinstance(rec, dict) or not isinstance(rec.get("prompt"), str) or isinstance(pid, bool) or not isinstance(pid, (str, int)):
            problems.append(f"{where}: fields 'prompt' (string) and 'prompt_id' (string or integer) are required")
            continue
        if str(pid) in seen:
            problems.append(f"{where}: field 'prompt_id': duplicate '{pid}'")
            continue
        qas = []
        for j, raw in enumerate(rec.get("QAs") if isinstance(rec.get("QAs"), list) else []):
            qa = _qa(raw, j, {q.id for q in qas})
            if isinstance(qa, str):
                problems.append(f"{where} (prompt_id {pid}): QAs[{j}]: {qa}")
                continue
            if not qa.options:  # kept: a lettered reply is still read, but a reply naming an option's text is not
                problems.append(f"{where} (prompt_id {pid}): QAs[{j}]: field 'question' lists no '(A) …' options; "
                                "only replies that give a letter can be read")
            qas.append(qa)
        if not qas:
            problems.append(f"{where} (prompt_id {pid}): field 'QAs' has no usable question")
            continue
        seen.add(str(pid))
        items.append(UniItem(str(pid), rec["prompt"], tuple(qas)))
    return Items(items, problems)


def _qa(raw, j: int, taken: set) -> QA | str:
    """One question, or why it cannot be used."""
    if not isinstance(raw, dict) or not isinstance(raw.get("question"), str) or not raw["question"].strip():
        return "needs a 'question' string"
    answer = str(raw.get("answer", "")).strip().strip("()").strip().upper()
    tag = raw.get("tag")
    tags = tuple(str(t).strip() for t in (tag if isinstance(tag, (list, tuple)) else str(tag or "").split(",")))
    if answer not in tuple(LETTERS):
        return f"field 'answer' must be a letter A-E, got {raw.get('answer')!r}"
    if len(tags) != 3 or not all(tags):
        return f"field 'tag' must name three levels (L0, L1, L2), got {tag!r}"
    qid = str(raw.get("QA_id", j))
    if qid in taken:
        return f"field 'QA_id': duplicate '{qid}' within the prompt"
    return QA(qid, raw["question"], answer, tags, options_of(raw["question"]))


def make_parser(qa: QA):
    def parse(text: str) -> dict:
        letter = answer_letter(text, qa.options)
        return {"letter": letter} if letter else {"letter": None, "reply": text[:300]}  # invalid: keep what it said
    return parse


def queries(item: UniItem, criteria=None, data_dir=None) -> list[Query]:
    return [Query(f"qa{qa.id}", USER.format(question=qa.question), make_parser(qa), SYSTEM, max_tokens=64) for qa in item.qas]


# --- the benchmark's own questions: uni_eval.py ----------------------------------------------------------------

@lru_cache(maxsize=None)
def _upstream_pieces(folder: str):
    check = function("UniEval", folder, "uni_eval.py", "check_answer", {"re": re})
    options = compile(ast.Expression(inner_assignment("UniEval", folder, "uni_eval.py", "uni_eval", "options")), "options", "eval")
    return check, options


def upstream_queries(folder: str, item, criteria=None, extra=None) -> list[Query]:
    check, options_expr = _upstream_pieces(str(folder))
    queries = []
    for qa in item.qas:
        options = eval(options_expr, {}, {"QA": {"question": qa.question}})  # noqa: S307 - the pinned upstream expression

        def parse(text: str, qa=qa, options=options) -> dict:
            _, response = check(text, qa.answer, options)
            letter = response if response in tuple("ABCDE") else None
            return {"letter": letter} if letter else {"letter": None, "reply": text[:300]}

        wire = WireFormat(system_parts=False, image_mime=None, body=(("temperature", 0.0), ("max_tokens", 64)))
        queries.append(Query(f"qa{qa.id}", qa.question, parse, wire=wire, encode=file_as_is))
    return queries


def score(outcome: Outcome) -> tuple[float, dict]:
    """Case-level score: the share of this image's questions answered right; every answer kept in details."""
    item: UniItem = outcome.item
    answers = []
    for qa in item.qas:
        answer = outcome.answers.get(f"qa{qa.id}") or {}
        got = answer.get("letter")
        answers.append({"qa": qa.id, "tags": list(qa.tags), "expected": qa.answer, "got": got, "correct": got == qa.answer,
                        **({"reply": answer.get("reply", "")} if got is None else {})})
    return sum(a["correct"] for a in answers) / len(answers), {"answers": answers}


def summarize(df: pd.DataFrame, items=None) -> dict:
    """As uni_eval.py's `statistics`: accuracy per L2 tag, L1 = mean of its L2 accuracies, L0 = mean of its L1;
    every tag score rounded to 3 decimals, and UniScore = the 3-decimal mean of the *rounded* L1 scores. A
    missing image or a failed judge answer is an invalid, wrong answer (upstream's empty reply): with `items`,
    every question of every benchmark prompt counts on `samples` images, the most any prompt of the model
    has. `vistar_observed` gives the earlier choice: only the answers that exist, unrounded."""
    ok, coverage = ok_rows(df, "uniscore")
    sub = df[df.metric == "uniscore"]
    out = {}
    for model, g in each_model(df, "uniscore", ok):
        answers = [(str(pid), a) for pid, d in zip(g["prompt_id"], g["d"]) for a in d.get("answers", [])]
        observed = _uni_stats(answers, digits=None)
        filled, missing = _with_missing(answers, sub[sub.model == model], items)
        stats = _uni_stats(filled)
        out[model] = {**stats, "missing_answers": missing, "coverage": coverage.get(model),
                      "missing_rule": "upstream: a missing image or failed judge answer counts as a wrong (invalid) answer",
                      "vistar_observed": {k: observed[k] for k in ("uniscore", "case_score", "l1")},
                      "vistar_observed_rule": VISTAR_PARTIAL + " (unrounded)"}
    return out


def _with_missing(answers: list, rows: pd.DataFrame, items) -> tuple[list, int]:
    """The answers plus one invalid answer per question the model's images did not answer."""
    if items is None:
        return answers, 0
    samples = max(rows.groupby("prompt_id").size().max() if len(rows) else 1, 1)
    have: dict[tuple, int] = defaultdict(int)
    for pid, a in answers:
        have[(pid, str(a["qa"]))] += 1
    filled, missing = list(answers), 0
    for item in items:
        for qa in item.qas:
            for _ in range(samples - have.get((str(item.id), str(qa.id)), 0)):
                filled.append((str(item.id), {"qa": qa.id, "tags": list(qa.tags), "got": None, "correct": False}))
                missing += 1
    return filled, missing


def _uni_stats(answers: list[tuple[str, dict]], digits: int | None = 3) -> dict:
    """uni_eval.py's numbers from (prompt id, answer) pairs, rounded as it prints them (`digits=None`: unrounded)."""
    def r(x):
        return round(x, digits) if digits is not None else x

    l2: dict[tuple, list[bool]] = defaultdict(list)
    letters: dict[str, int] = defaultdict(int)
    per_prompt: dict[str, list[bool]] = defaultdict(list)
    for pid, a in answers:
        l2[tuple(a["tags"])].append(bool(a["correct"]))
        letters[a["got"] if a["got"] in tuple("ABCDE") else "invalid"] += 1
        per_prompt[pid].append(bool(a["correct"]))
    l2_acc = {t: sum(v) / len(v) for t, v in l2.items()}
    l1_acc = _roll_up(l2_acc)
    l0_acc = _roll_up(l1_acc)
    l1_printed = {t: r(a) for t, a in l1_acc.items()}
    cases = [v for v in per_prompt.values() if v]
    total = sum(letters.values())
    return {"uniscore": r(sum(l1_printed.values()) / len(l1_printed)) if l1_printed else None,
            "l0": {t0: r(acc) for (t0,), acc in l0_acc.items()},
            "l1": {" / ".join(t): a for t, a in l1_printed.items()},
            "l2": {" / ".join(t): r(a) for t, a in l2_acc.items()},
            "case_score": r(sum(sum(v) / len(v) for v in cases) / len(cases)) if cases else None,
            "prompts_all_right": r(sum(all(v) for v in cases) / len(cases)) if cases else None,
            "options": {k: r(v / total) for k, v in sorted(letters.items())} if total else {},
            "invalid_rate": r(letters.get("invalid", 0) / total) if total else None}


def _roll_up(accuracy: dict[tuple, float]) -> dict[tuple, float]:
    """One tag level up: each parent's accuracy is the plain mean of its children's, so a tag with many
    questions weighs no more than a sibling with few."""
    children: dict[tuple, list[float]] = defaultdict(list)
    for tags, acc in accuracy.items():
        children[tags[:-1]].append(acc)
    return {tags: sum(v) / len(v) for tags, v in children.items()}


def headline(numbers: dict) -> dict:
    return {"uniscore": numbers["uniscore"], "missing_answers": numbers["missing_answers"], "coverage": numbers["coverage"]}


def demo_reply(system: str, user: str, facts) -> str:
    """The option naming the image's dominant colour, else (E)."""
    options = dict(re.findall(r"\(([A-E])\) ([^,(]*)", user.split("Options:", 1)[-1]))
    return "(" + next((k for k, v in options.items() if re.search(rf"\b{facts[0]}\b", v, re.I)), "E") + ")"


PROTOCOL = Protocol(NAME, VERSION, {"uniscore": score}, (SYSTEM, USER), load_items, queries, summarize, headline,
                    demo_reply, (SYSTEM,), data_subdir="UniEval",
                    layout="IMAGES/<model>/<prompt_id>_<k>.png (several samples per prompt)",
                    upstream=Family("UniEval", upstream_queries,
                                    note="the script hands the question to each model's own `understand`; vistar sends it as "
                                         "the user text before the image, with vistar's decoding"))
