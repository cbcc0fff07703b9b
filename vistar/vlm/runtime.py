"""How feature stages reach the judge: one Judge per process (client, cache) built from the run's judge settings, and the
one judge-batch routine every judge stage runs (HWPQ and the benchmark protocols): collect the batch's questions,
ask them together, regroup the answers by what they belong to, and make one error of an owner whose questions
did not all get an answer."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Hashable

from .errors import HOW_TO_CONFIGURE, JudgeError, JudgeUnavailable
from .types import JudgeReply, JudgeRequest, Parser

if TYPE_CHECKING:  # the real import needs the optional httpx extra, so it happens lazily in _build
    from .judge import Judge


def judge_from_context(ctx) -> Judge:
    """The run's judge; JudgeUnavailable (rows become `skipped`, saying how to configure one) when none is set."""
    cfg = ctx.options.judge
    if cfg is None:
        raise JudgeUnavailable("no judge configured", HOW_TO_CONFIGURE)
    return ctx.model("vlm.judge", lambda: _build(cfg, ctx))


def _build(cfg, ctx):
    try:
        from .judge import Judge
    except ImportError as exc:  # httpx is an optional extra
        raise JudgeUnavailable(f"judge client unavailable ({exc})", "install it with `pip install 'vistar[vlm]'`") from None
    return Judge(cfg, device=ctx.device)


@dataclass(frozen=True)
class Question:
    """One question of a batch: whose it is, what is sent, how the reply is read, and what the asker needs to
    place the answer (a question id and vote, the protocol query)."""

    owner: Hashable                 # an image's index in the batch, an item's id
    request: JudgeRequest
    parse: Parser
    tag: Any = None
    bill: tuple[str, str] = ("", "")  # (image, prompt) the cost ledger charges it to


Answers = list[tuple[Any, Any]]  # (tag, parsed reply) of every question of one owner, in asking order


def ask_batch(ctx, judge: Judge, questions: list[Question], what: Callable[[Hashable], str]) -> dict[Hashable, Answers | JudgeError]:
    """Every question asked at once (cache first, bounded concurrency), charged to the ledger of the batch being
    scored; per owner, its answers, or one JudgeError naming `what(owner)` when any of its questions failed
    (answers that succeeded are cached already). Owners without questions are absent."""
    replies = judge.ask([(q.request, q.parse) for q in questions], bill=[q.bill for q in questions],
                        ledger=ctx.judge_ledger)
    grouped: dict[Hashable, list[tuple[Question, JudgeReply]]] = {}
    for question, reply in zip(questions, replies):
        grouped.setdefault(question.owner, []).append((question, reply))
    return {owner: _failure([r for _, r in pairs], what(owner)) or [(q.tag, r.parsed) for q, r in pairs]
            for owner, pairs in grouped.items()}


def _failure(replies: list[JudgeReply], what: str) -> JudgeError | None:
    """One error for an owner whose questions did not all get an answer."""
    failed = [r for r in replies if not r.ok]
    if not failed:
        return None
    return JudgeError(f"{len(failed)} of {len(replies)} judge question(s) for {what} failed; first: {failed[0].error}. "
                      "Answers that succeeded are cached; rerun with --retry-errors to re-ask only the failed ones")
