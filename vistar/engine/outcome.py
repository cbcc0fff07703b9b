"""How a run ended, in words that `run.json` and the command line share: why it had nothing to score, and the
error that stops a run the system failed (a full disk, a read-only folder)."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .plan import RunSummary
from .shards import Shard


class RunScope(Protocol):
    """What explaining an empty run reads of the run's configuration (runner.ScoreConfig)."""

    @property
    def prompts(self) -> Path: ...
    @property
    def images(self) -> Path: ...
    @property
    def angles(self) -> list[str] | None: ...
    @property
    def shard(self) -> Shard | None: ...
    @property
    def manifest(self) -> Path | None: ...


class RunIOError(OSError):
    """The system failed a read or write of the run (no space, permission, a read-only or failing disk) after the
    run began: `run.json` says `failed` and the rows written so far stay, so the same command resumes. Keeps the
    cause's errno and file name; the message adds what run.json says and what to do."""

    def __init__(self, exc: OSError, run_json_says: str):
        super().__init__(exc.errno, exc.strerror, exc.filename)
        self.message = (f"{exc}; {run_json_says}. The rows written so far are kept: once the disk has room (or the "
                        "folder is writable), rerun the same command to finish the run")

    def __str__(self) -> str:
        return self.message


def nothing_reason(summary: RunSummary, cfg: RunScope) -> str:
    """Why a run had nothing to work on, in the order a user would check: the prompts, the angles, the images."""
    scope, prompts_file = summary.scope, str(cfg.prompts)
    broken = sum(p["kind"] == "prompt_error" for p in summary.problems)
    if not scope.get("prompts") and not broken:
        return f"{prompts_file} holds no prompt (empty, or only blank and # comment lines)"
    if not scope.get("prompts"):
        return f"no prompt of {prompts_file} could be used: {broken} error(s) above (`vistar dsl check FILE`)"
    if not scope.get("wanted_prompts"):
        found = ", ".join(f"{angle} ({n})" for angle, n in scope.get("angles", {}).items())
        return f"no prompt has the requested angle(s) {', '.join(cfg.angles or [])}; the prompts' angles: {found}"
    if cfg.shard is not None and scope.get("matched_images"):
        return f"shard {cfg.shard} holds none of the {scope['matched_images']} matched images"
    unmatched = scope.get("unmatched_images", 0)
    found = f"; {unmatched} image file(s) match no prompt id (listed above)" if unmatched else "; no image file found"
    if cfg.manifest is not None:
        return f"no row of the manifest {cfg.manifest} names an image of a prompt of the run{found}"
    return (f"no image matched a prompt: expected {cfg.images}/<model>/<prompt-id>.png "
            f"(or <prompt-id>_<k>.<ext> for sample k){found}")
