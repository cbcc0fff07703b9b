"""The exit codes every `vistar` command uses: the single definition (README "Exit codes", docs/cli.md).

A script or scheduler reads them without parsing output: 0 and PARTIAL mean the work was done (PARTIAL with
error rows or invalid prompts to look at), NOTHING_SCORED means the run had nothing it could work on.
"""
from __future__ import annotations

import signal
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0               # the command did all it was asked
    FINDINGS = 1         # a check ran and found what it reports: invalid prompts (`dsl check`), a hash mismatch
                         # (`models verify`), flagged prompts (`suite screen`), failed questionnaires, a failed fetch
    USAGE = 2            # bad command line or unusable input: unknown option, bad value, unreadable or invalid file,
                         # a run folder another process holds; nothing was written (same code as click's usage errors)
    PARTIAL = 3          # the work completed, but some rows are `error` or some prompts invalid (counts in the last
                         # line); `--partial-ok` turns it into 0
    NOTHING_SCORED = 4   # nothing could be scored and nothing was there to resume: no prompt parsed, no image
                         # matched a prompt, no prompt has the requested angles, an empty prompt file, no rows
    # 128 + N: stopped by signal N (130 Ctrl-C/SIGINT, 143 SIGTERM); a stopped `score` says `interrupted` in run.json


def interrupted_code(exc: KeyboardInterrupt) -> int:
    """128 + the number of the signal that stopped the command: `runmeta.Interrupted` carries it (SIGTERM),
    a plain KeyboardInterrupt is Ctrl-C (SIGINT)."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


def partial_or_ok(partial: bool, partial_ok: bool) -> ExitCode:
    """PARTIAL unless the caller asked to treat partial work as success."""
    return ExitCode.PARTIAL if partial and not partial_ok else ExitCode.OK
