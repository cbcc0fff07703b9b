"""Read prompt files: `.vistar` (one `ID: PROMPT` per line) and JSONL (`id`, `prompt`, extra metadata)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import PromptSyntaxError, PromptValidationError
from .model import Prompt
from .parser import parse_prompt

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_LINE_RE = re.compile(r"^\s*(?P<id>[^\s:]+)\s*:\s*(?P<prompt>.*)$")


@dataclass
class PromptFile:
    """Everything read from one file: good prompts and the problems, so one bad line never hides the rest."""

    prompts: list[Prompt] = field(default_factory=list)
    errors: list[Exception] = field(default_factory=list)


def read_prompts(path: str | Path) -> PromptFile:
    path = Path(path)
    result = PromptFile()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        result.errors.append(PromptValidationError(str(path), "file", f"cannot read: {exc}"))
        return result
    reader = _read_jsonl if path.suffix.lower() in (".jsonl", ".ndjson") else _read_vistar
    seen: dict[str, str] = {}
    for item in reader(path, text):
        if isinstance(item, Exception):
            result.errors.append(item)
        elif item.id in seen:
            result.errors.append(PromptValidationError(item.source, "id", f"duplicate id '{item.id}' (first at {seen[item.id]})"))
        else:
            seen[item.id] = item.source
            result.prompts.append(item)
    return result


def _check_id(pid, location: str) -> PromptValidationError | None:
    if not isinstance(pid, str) or not ID_RE.fullmatch(pid):
        return PromptValidationError(location, "id", f"invalid id {pid!r}: use letters, digits, '_', '.', '-'")
    return None


def _read_vistar(path: Path, text: str):
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        location = f"{path}:{lineno}"
        match = _LINE_RE.match(line)
        if not match:
            yield PromptSyntaxError("expected 'ID: [ROLE|ANGLE] core {...}'", line, 1, location)
            continue
        if (err := _check_id(match["id"], location)) is not None:
            yield err
            continue
        offset = match.start("prompt")
        try:
            yield parse_prompt(match["prompt"], id=match["id"], location=location)
        except PromptSyntaxError as exc:  # re-anchor the caret on the full line
            yield PromptSyntaxError(exc.message, line, exc.column + offset, location)


def _read_jsonl(path: Path, text: str):
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        location = f"{path}:{lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield PromptSyntaxError(f"invalid JSON: {exc.msg}", line, exc.colno, location)
            continue
        if not isinstance(record, dict):
            yield PromptValidationError(location, "record", "each line must be a JSON object")
            continue
        pid, dsl = record.pop("id", None), record.pop("prompt", None)
        if (err := _check_id(pid, location)) is not None:
            yield err
            continue
        if not isinstance(dsl, str):
            yield PromptValidationError(location, "prompt", "missing or not a string")
            continue
        try:
            yield parse_prompt(dsl, id=pid, location=location, metadata=record)
        except PromptSyntaxError as exc:
            yield PromptSyntaxError(exc.message, exc.text, exc.column, f"{location} (field 'prompt')")


def write_vistar(prompts: list[Prompt], path: str | Path) -> None:
    from .parser import serialize_prompt

    lines = [f"{p.id}: {serialize_prompt(p)}" for p in prompts]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
