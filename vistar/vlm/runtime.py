"""How feature stages reach the judge: one Judge per process (client, cache) built from the run options, and the
ledger the current batch is charged to."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .config import config_from_options
from .errors import HOW_TO_CONFIGURE, JudgeError, JudgeUnavailable
from .types import JudgeReply

if TYPE_CHECKING:  # the real import needs the optional httpx extra, so it happens lazily in _build
    from .judge import Judge


def judge_from_context(ctx) -> Judge:
    """The run's judge; JudgeUnavailable (rows become `skipped`, saying how to configure one) when none is set."""
    cfg = config_from_options(ctx.options)
    if cfg is None:
        raise JudgeUnavailable("no judge configured", HOW_TO_CONFIGURE)
    return ctx.model("vlm.judge", lambda: _build(cfg, ctx))


def _build(cfg, ctx):
    try:
        from .judge import Judge
    except ImportError as exc:  # httpx is an optional extra
        raise JudgeUnavailable(f"judge client unavailable ({exc})", "install it with `pip install 'vistar[vlm]'`") from None
    return Judge(cfg, device=ctx.device)


def batch_ledger(ctx):
    """The ledger of the batch being scored: the run's own in one process; in a scoring worker, the one the
    worker replaces for each batch and sends back with its rows (the judge outlives the batches, so it must not
    keep the first batch's). None: the judge's own."""
    return ctx.options.get("judge_ledger")


def failure(replies: list[JudgeReply], what: str) -> JudgeError | None:
    """One error for an image whose questions did not all get an answer (answered ones are cached already)."""
    failed = [r for r in replies if not r.ok]
    if not failed:
        return None
    return JudgeError(f"{len(failed)} of {len(replies)} judge question(s) for {what} failed; first: {failed[0].error}. "
                      "Answers that succeeded are cached; rerun with --retry-errors to re-ask only the failed ones")
