"""UniEval (UniBench): 5-option multiple-choice questions per prompt, several images per prompt.

The answer letter is the last `(X)`, else the last `X)`, else a trailing letter, else the option whose text
the reply contains; otherwise the answer is invalid and counts as wrong. Accuracy per L2 tag is averaged
into L1 tags and L1 into L0; the headline UniScore is the mean over L1 tags (see `aggregate`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ReplyFormatError
from .base import Items, Outcome, Protocol, Query, make_prompt, read_json

NAME, VERSION = "unieval", "1"
LETTERS = "ABCDE"
SYSTEM = "You answer multiple-choice questions about an image. Look at the image carefully."
USER = "{question}"  # the benchmark's own question text already asks for the letter format

_PAREN = re.compile(r"\(([A-E])\)")
_HALF = re.compile(r"(?<![A-Za-z])([A-E])\)")
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
    for pattern in (_PAREN, _HALF):
        found = pattern.findall(text)
        if found:
            return found[-1]
    m = _TRAIL.search(text)
    if m:
        return m.group(1)
    lowered = text.lower()
    hits = [k for k, v in options.items() if v and v.lower() in lowered]
    return hits[0] if len(hits) == 1 else None


def load_items(data_dir: str | Path) -> Items:
    path = PROTOCOL.data_root(data_dir) / "uni_bench.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: UniEval benchmark file not found")
    data = read_json(path)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of prompts")
    items, problems = [], []
    for n, rec in enumerate(data):
        where = f"{path}: record {n}"
        if not isinstance(rec, dict) or not isinstance(rec.get("prompt"), str) or "prompt_id" not in rec:
            problems.append(f"{where}: fields 'prompt' (string) and 'prompt_id' are required")
            continue
        qas, bad = [], None
        for j, qa in enumerate(rec.get("QAs") or []):
            tags = tuple(t.strip() for t in str(qa.get("tag", "")).split(",")) if isinstance(qa, dict) else ()
            if not isinstance(qa, dict) or qa.get("answer") not in tuple(LETTERS) or len(tags) != 3 or not qa.get("question"):
                bad = f"{where}: QAs[{j}]: needs 'question', 'answer' (A-E) and a three-level 'tag'"
                break
            qas.append(QA(str(qa.get("QA_id", j)), str(qa["question"]), qa["answer"], tags, options_of(str(qa["question"]))))
        if bad or not qas:
            problems.append(bad or f"{where}: field 'QAs' is empty")
            continue
        items.append(UniItem(str(rec["prompt_id"]), rec["prompt"], tuple(qas)))
    return Items(items, problems)


def make_parser(qa: QA):
    def parse(text: str) -> dict:
        if not isinstance(text, str):
            raise ReplyFormatError("empty reply")
        return {"letter": answer_letter(text, qa.options)}
    return parse


def queries(item: UniItem, criteria=None, data_dir=None) -> list[Query]:
    return [Query(f"qa{qa.id}", USER.format(question=qa.question), make_parser(qa), SYSTEM, max_tokens=64) for qa in item.qas]


def score(outcome: Outcome) -> tuple[float, dict]:
    """Case-level score: the share of this image's questions answered right; every answer kept in details."""
    item: UniItem = outcome.item
    answers = []
    for qa in item.qas:
        got = (outcome.answers.get(f"qa{qa.id}") or {}).get("letter")
        answers.append({"qa": qa.id, "tags": list(qa.tags), "expected": qa.answer, "got": got, "correct": got == qa.answer})
    return sum(a["correct"] for a in answers) / len(answers), {"answers": answers}


PROTOCOL = Protocol(NAME, VERSION, ("uniscore",), (SYSTEM, USER), load_items, queries, data_subdir="UniEval",
                    layout="IMAGES/<model>/<prompt_id>_<k>.png (several samples per prompt)")
