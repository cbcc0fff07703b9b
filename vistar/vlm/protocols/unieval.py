"""UniEval (UniBench): 5-option multiple-choice questions per prompt, several images per prompt.

The answer letter follows the benchmark's `check_answer`: the last `(X` or `X)`, else a trailing letter, else
the option whose text occurs last in the reply; otherwise the answer is invalid and counts as wrong. Accuracy
per L2 tag is averaged into L1 tags and L1 into L0; the headline UniScore is the mean over L1 tags (see
`aggregate`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import aggregate
from .base import Items, Outcome, Protocol, Query, make_prompt, read_json

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


def headline(numbers: dict) -> dict:
    return {"uniscore": numbers["uniscore"], "missing_answers": numbers["missing_answers"], "coverage": numbers["coverage"]}


def demo_reply(system: str, user: str, facts) -> str:
    """The option naming the image's dominant colour, else (E)."""
    options = dict(re.findall(r"\(([A-E])\) ([^,(]*)", user.split("Options:", 1)[-1]))
    return "(" + next((k for k, v in options.items() if re.search(rf"\b{facts[0]}\b", v, re.I)), "E") + ")"


PROTOCOL = Protocol(NAME, VERSION, {"uniscore": score}, (SYSTEM, USER), load_items, queries, aggregate.unieval, headline,
                    demo_reply, (SYSTEM,), data_subdir="UniEval",
                    layout="IMAGES/<model>/<prompt_id>_<k>.png (several samples per prompt)")
