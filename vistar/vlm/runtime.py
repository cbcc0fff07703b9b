"""How feature stages reach the judge: one Judge per run (client, cache, ledger) built from the run's judge settings."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import HOW_TO_CONFIGURE, JudgeError, JudgeUnavailable
from .types import JudgeReply

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
    return Judge(cfg, ctx.judge_ledger, device=ctx.device)


def failure(replies: list[JudgeReply], what: str) -> JudgeError | None:
    """One error for an image whose questions did not all get an answer (answered ones are cached already)."""
    failed = [r for r in replies if not r.ok]
    if not failed:
        return None
    return JudgeError(f"{len(failed)} of {len(replies)} judge question(s) for {what} failed; first: {failed[0].error}. "
                      "Answers that succeeded are cached; rerun with --retry-errors to re-ask only the failed ones")
