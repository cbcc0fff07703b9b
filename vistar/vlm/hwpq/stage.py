"""Feature stage `hwpq`: the image's questionnaire answered by the judge with k votes, per-question or batched."""
from __future__ import annotations

from ...api import FeatureStage
from ..errors import DataError, JudgeError, JudgeUnavailable
from ..images import image_sha256, png_bytes
from ..runtime import Question, ask_batch, judge_from_context
from ..types import JudgeRequest
from . import online
from .questionnaire import Questionnaire
from .store import QuestionnaireStore

VERSION = "1"
GENERATE_HINT = ("run `vistar hwpq generate PROMPTS --judge-url URL --judge-model MODEL` (or write one by hand, "
                 "docs/hwpq.md) and pass its folder with --hwpq-dir if it is not the default")


def _calls(q, png: bytes, sha: str, mode: str, votes: int) -> list[tuple[JudgeRequest, object, str | None]]:
    """(request, parser, question id or None for a batched call) for every vote."""
    out = []
    for vote in range(votes):
        if mode == "batched":
            req = JudgeRequest(online.PROTOCOL, f"{q.hash}/all/v{vote}", online.BATCHED_HASH, online.batched_prompt(q),
                               online.SYSTEM, (png,), sha, vote, text_fixed_by_id=online.TEXT_FIXED_BY_ID)
            out.append((req, online.batched_parser(q), None))
        else:
            for qid, text in q.questions():
                req = JudgeRequest(online.PROTOCOL, f"{q.hash}/{qid}/v{vote}", online.PER_QUESTION_HASH,
                                   online.per_question_prompt(text), online.SYSTEM, (png,), sha, vote, max_tokens=64,
                                   text_fixed_by_id=online.TEXT_FIXED_BY_ID)
                out.append((req, online.parse_single, qid))
    return out


def compute(inputs, ctx) -> list:
    judge = judge_from_context(ctx)
    store = QuestionnaireStore(ctx.options.hwpq_dir)
    mode, k = judge.cfg.mode, judge.cfg.votes
    outputs: list = [None] * len(inputs)
    questionnaires: dict[int, Questionnaire] = {}
    questions = []
    for i, inp in enumerate(inputs):
        try:
            q = store.get(inp.prompt)
        except DataError as exc:
            outputs[i] = exc
            continue
        if q is None:
            outputs[i] = JudgeUnavailable(f"no HWPQ questionnaire for prompt '{inp.prompt.id}' in {store.dir}", GENERATE_HINT)
            continue
        questionnaires[i] = q
        sha = image_sha256(inp.image)
        for req, parse, qid in _calls(q, png_bytes(inp.image, judge.cfg.image_max_side), sha, mode, k):
            questions.append(Question(i, req, parse, (qid, req.vote), (sha, inp.prompt.fingerprint)))
    answered = ask_batch(ctx, judge, questions, lambda i: f"prompt '{inputs[i].prompt.id}'")
    for i, answers in answered.items():
        outputs[i] = answers if isinstance(answers, JudgeError) else _outcome(questionnaires[i], answers, mode, k, judge.identity)
    return outputs


def _outcome(q: Questionnaire, answers: list, mode: str, k: int, judge: str) -> online.HwpqOutcome:
    """The votes of one image: a batched call answers every question of its vote, a per-question call one."""
    votes: dict[str, list[bool]] = {qid: [False] * k for qid, _ in q.questions()}
    for (qid, vote), parsed in answers:
        if qid is None:
            for question, answer in parsed.items():
                votes[question][vote] = bool(answer)
        else:
            votes[qid][vote] = bool(parsed)
    return online.HwpqOutcome(q, votes, mode, judge)


STAGE = FeatureStage(name="hwpq", version=VERSION, compute=compute)
