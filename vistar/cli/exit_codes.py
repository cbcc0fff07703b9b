"""The exit codes every `vistar` command uses: the single definition (README "Exit codes", docs/cli.md).

A script or scheduler reads them without parsing output: 0 and PARTIAL mean the work was done (PARTIAL with
error rows or invalid prompts to look at), NOTHING_SCORED means the run had nothing it could work on.
"""
from __future__ import annotations

import errno
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
                         # matched a prompt, no prompt has the requested angles, an empty prompt file, no rows;
                         # a `score` run folder's run.json then says `nothing_scored` and why
    IO_FAILURE = 5       # the system failed a read or write: no space left, a quota, permission denied, a read-only
                         # or failing disk; a `score` run says `failed` in run.json and resumes when rerun
    # 128 + N: stopped by signal N (130 Ctrl-C/SIGINT, 143 SIGTERM); a stopped `score` says `interrupted` in run.json


PIPE_CLOSED = 128 + signal.SIGPIPE   # 141: the reader of standard output closed the pipe (`| head -1`)


def interrupted_code(exc: KeyboardInterrupt) -> int:
    """128 + the number of the signal that stopped the command: `runmeta.Interrupted` carries it (SIGTERM),
    a plain KeyboardInterrupt is Ctrl-C (SIGINT)."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


def partial_or_ok(partial: bool, partial_ok: bool) -> ExitCode:
    """PARTIAL unless the caller asked to treat partial work as success."""
    return ExitCode.PARTIAL if partial and not partial_ok else ExitCode.OK


# errors of the system, not of the command line: the same command works once the disk or folder is mended
_SYSTEM_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EIO, errno.EFBIG}


def is_system_failure(exc: BaseException) -> bool:
    """An OSError the system raised (no space, permission, a read-only or failing disk), not one about what the
    command line named (a path that does not exist, or is not a folder)."""
    return isinstance(exc, OSError) and exc.errno in _SYSTEM_ERRNOS


def os_error_code(exc: OSError) -> ExitCode:
    """IO_FAILURE for what the system refused, USAGE for the rest."""
    return ExitCode.IO_FAILURE if is_system_failure(exc) else ExitCode.USAGE
