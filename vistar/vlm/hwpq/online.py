"""Online phase: the image and the questionnaire's questions go to the VLM, k independent votes each.

per-question mode (the paper): one call per question and vote — 2·pairs·k calls per image.
batched mode: all questions of the image in one structured call per vote — k calls per image.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ReplyFormatError
from ..replies import Reply, boolean, json_object
from ..types import text_hash
from .questionnaire import Level, Pair, Questionnaire, majority, score

PROTOCOL = "hwpq@1"
SYSTEM = ("You are a careful visual inspector. You answer yes/no questions about one image, strictly from what "
          "is visible in it.")
PER_QUESTION = """Question about the image: {question}
Reply with only a JSON object: {{"answer": true}} for yes or {{"answer": false}} for no."""
BATCHED = """Answer every question about the image with true (yes) or false (no), independently of each other.

{questions}

Reply with only a JSON object mapping every question id to true or false, e.g. {{"answers": {{"{first}": true, ...}}}}"""
PER_QUESTION_HASH = text_hash(SYSTEM, PER_QUESTION)
BATCHED_HASH = text_hash(SYSTEM, BATCHED)


def per_question_prompt(question: str) -> str:
    return PER_QUESTION.format(question=question)


def parse_single(text: str) -> bool:
    """A bare yes/no, true/false or 1/0 (any case, a trailing full stop allowed: `replies.boolean`), else the
    reply's 'answer'. Only those words read bare: any other number (`2`, `0.5`, `.1`) is re-asked."""
    try:
        return boolean(text, "the reply")
    except ReplyFormatError:
        return Reply(text).get("answer", interpret=lambda v: boolean(v, "'answer'"))


def batched_prompt(q: Questionnaire) -> str:
    questions = q.questions()
    lines = "\n".join(f"{qid}: {text}" for qid, text in questions)
    return BATCHED.format(questions=lines, first=questions[0][0])


def _rendering() -> str:
    """How the request text is built from the templates and a questionnaire, on a fixed example."""
    probe = Questionnaire((Level("L1", 1.0, (Pair("L1.1", 1.0, "Is the cup red?", "Is the cup blue?"),)),))
    return text_hash(SYSTEM, per_question_prompt("Is the cup red?"), batched_prompt(probe))


# The text is fixed by the template hash and the questionnaire hash in the item id, so an answer cached under
# the key of older versions (without the text hash) is reused, while the rendering is still theirs.
TEXT_FIXED_BY_ID = _rendering() == "a4acc59fff0f7d3a"


def batched_parser(q: Questionnaire):
    ids = [qid for qid, _ in q.questions()]

    def parse(text: str) -> dict:
        obj = json_object(text)
        wrappers = [v for k, v in obj.items() if str(k).lower() == "answers"]   # the wrapper is optional
        answers = wrappers[0] if wrappers else obj
        if not isinstance(answers, dict):
            raise ReplyFormatError("'answers' must map question ids to true/false")
        missing = [i for i in ids if i not in answers]
        if missing:
            raise ReplyFormatError(f"no answer for question(s) {', '.join(missing[:5])}" + (" ..." if len(missing) > 5 else ""))
        extra = [k for k in answers if k not in ids]
        if extra:
            raise ReplyFormatError(f"unknown question id(s) {', '.join(map(str, extra[:5]))}")
        read = {i: boolean(answers[i], f"answer to {i}") for i in ids}
        clash = sorted({i for place in ([obj, *wrappers[1:]] if wrappers else []) for i in _disagreeing(read, place)})
        if clash:
            raise ReplyFormatError(f"question(s) {', '.join(clash[:5])} answered both true and false (inside and beside "
                                   "'answers'); the reply is ambiguous")
        return read
    return parse


def _disagreeing(read: dict[str, bool], place: object) -> list[str]:
    """The question ids PLACE (the reply's top level, or a second wrapper) answers otherwise than READ; a value
    there that is not true/false is a note, not a second answer (as `replies.Reply.get` treats one)."""
    if not isinstance(place, dict):
        return []
    found = []
    for qid, value in read.items():
        try:
            if qid in place and boolean(place[qid], qid) != value:
                found.append(qid)
        except ReplyFormatError:
            continue
    return found


@dataclass
class HwpqOutcome:
    """All votes of one image: the feature the SF/CUL/MA metrics read."""

    questionnaire: Questionnaire
    votes: dict[str, list[bool]]     # question id -> one answer per vote
    mode: str
    judge: str = ""                  # judge model id[:version], kept in the row details

    def result(self) -> tuple[float, dict]:
        final = {qid: majority(v) for qid, v in self.votes.items()}
        value, pairs = score(self.questionnaire, final)
        return value, {"mode": self.mode, "k": len(next(iter(self.votes.values()), [])), "pairs": pairs,
                       "votes": self.votes, "questionnaire": self.questionnaire.hash, "judge": self.judge}
