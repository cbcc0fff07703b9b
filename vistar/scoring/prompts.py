"""Prompts given to `vistar.Scorer`: DSL lines, parsed `Prompt` objects or dicts, one per image or one for all.

They end as a `PromptFile`, the reader's own result, so the engine sorts valid from invalid prompts exactly as it
does for a prompt file (`engine.plan.sort_prompts`): a prompt that parses but fails validation gives error rows.
A prompt that does not parse raises ValueError naming `prompts[i]`: there is no role or angle to give a row.
A prompt without an id (`[GD|TR] ...`, or a `Prompt`/dict without one) gets `p-` and 12 hex digits of its
fingerprint, the same id whenever the same prompt is given.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from ..prompts_dsl import Prompt, PromptFile, parse_prompt
from ..prompts_dsl.errors import PromptSyntaxError
from ..prompts_dsl.files import check_id

_ID_PREFIX = re.compile(r"^\s*(?P<id>[^\s:\[]+)\s*:\s*(?P<prompt>\[.*)$", re.S)
LOCATION = re.compile(r"prompts\[\d+\]")   # how a prompt's position is named: left out of its rows' keys


def prompt_per_image(prompts: object, n_images: int, argument: str = "prompts") -> tuple[list[Prompt], PromptFile]:
    """The prompt of each of N_IMAGES images and the prompts as the engine reads a file (each id once)."""
    if isinstance(prompts, (list, tuple)):
        if len(prompts) != n_images:
            raise ValueError(f"{argument}: {len(prompts)} prompts for {n_images} images; give one per image, or one for all")
        parsed = [_prompt(p, f"{argument}[{i}]") for i, p in enumerate(prompts)]
    else:
        parsed = [_prompt(prompts, argument)] * n_images
    seen: dict[str, tuple[Prompt, int]] = {}
    for i, prompt in enumerate(parsed):
        assert prompt.id is not None
        first = seen.setdefault(prompt.id, (prompt, i))
        if _content(first[0]) != _content(prompt):
            raise ValueError(f"{argument}[{i}]: id '{prompt.id}' is also {argument}[{first[1]}], a different prompt")
    return parsed, PromptFile(prompts=[p for p, _ in seen.values()])


def _content(prompt: Prompt) -> tuple[str, Any]:
    return prompt.fingerprint, prompt.metadata


def _prompt(value: object, where: str) -> Prompt:
    if isinstance(value, Prompt):
        prompt = value
    elif isinstance(value, str):
        prompt = _from_line(value, where)
    elif isinstance(value, Mapping):
        prompt = _from_record(dict(value), where)
    else:
        raise TypeError(f"{where}: expected a prompt line, a Prompt or a dict with 'id' and 'prompt', not {type(value).__name__}")
    if prompt.id is None:
        prompt = dataclasses.replace(prompt, id=f"p-{prompt.fingerprint[:12]}")
    return prompt


def _from_line(line: str, where: str) -> Prompt:
    match = _ID_PREFIX.match(line)
    pid, text = (match["id"], match["prompt"]) if match else (None, line)
    return _parsed(text, pid, where, {})


def _from_record(record: dict[str, Any], where: str) -> Prompt:
    """A dict as a JSONL prompt line: `prompt` (the DSL), `id` (a string, or an integer), any other field metadata."""
    text, pid = record.pop("prompt", None), record.pop("id", None)
    if isinstance(pid, int) and not isinstance(pid, bool):
        pid = str(pid)
    if not isinstance(text, str):
        raise ValueError(f"{where}: 'prompt' is missing or not a string")
    return _parsed(text, pid, where, record)


def _parsed(text: str, pid: str | None, where: str, metadata: dict[str, Any]) -> Prompt:
    if pid is not None and (bad := check_id(pid, where)) is not None:
        raise ValueError(str(bad))
    try:
        return parse_prompt(text, id=pid, location=where, metadata=metadata)
    except PromptSyntaxError as exc:
        raise ValueError(str(exc)) from None
