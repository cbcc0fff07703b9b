"""Read prompt files: `.vistar` (one `ID: PROMPT` per line) and JSONL (`id`, `prompt`, extra metadata).

Errors name `file:line:column`; for JSONL the column is in the raw JSON line (escapes accounted for),
so it matches what an editor shows.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path

from .errors import PromptSyntaxError, PromptValidationError
from .model import Prompt
from .parser import parse_prompt

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_LINE_RE = re.compile(r"^\s*(?P<id>[^\s:]+)\s*:\s*(?P<prompt>.*)$")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass
class PromptFile:
    """Everything read from one file: good prompts and the problems, so one bad line never hides the rest.

    `prompts` holds the first prompt of each id; a duplicate id is an error whose `prompt_id` names it."""

    prompts: list[Prompt] = field(default_factory=list)
    errors: list[Exception] = field(default_factory=list)

    @property
    def failed_ids(self) -> dict[str, Exception]:
        """Ids whose prompt could not be used (unparsable line, duplicate id) -> the first error about it."""
        out: dict[str, Exception] = {}
        for exc in self.errors:
            pid = getattr(exc, "prompt_id", None)
            if pid is not None:
                out.setdefault(pid, exc)
        return out


def read_prompts(path: str | Path) -> PromptFile:
    path = Path(path)
    result = PromptFile()
    try:
        text = path.read_text(encoding="utf-8-sig")  # -sig: a BOM written by some editors is not part of the first id
    except (OSError, UnicodeDecodeError) as exc:
        result.errors.append(PromptValidationError(str(path), "file", f"cannot read: {exc}"))
        return result
    reader = _read_jsonl if path.suffix.lower() in JSONL_SUFFIXES else _read_vistar
    seen: dict[str, str] = {}
    for item in reader(path, text.split("\n")):  # not splitlines(): U+2028 and friends may sit inside a core
        if isinstance(item, Exception):
            result.errors.append(item)
        elif item.id in seen:
            result.errors.append(PromptValidationError(item.source, "id", f"duplicate id '{item.id}' (first at {seen[item.id]})",
                                                       prompt_id=item.id))
        else:
            seen[item.id] = item.source
            result.prompts.append(item)
    return result


def _check_id(pid, location: str) -> PromptValidationError | None:
    if not isinstance(pid, str) or not ID_RE.fullmatch(pid):
        return PromptValidationError(location, "id", f"invalid id {pid!r}: use letters, digits, '_', '.', '-' "
                                                     "(starting with a letter or digit)")
    return None


def _read_vistar(path: Path, lines: list[str]):
    for lineno, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        location = f"{path}:{lineno}"
        match = _LINE_RE.match(line)
        if not match:  # point just after the first word, where the ':' belongs
            word = re.match(r"\s*[^\s:]*", line)
            yield PromptSyntaxError("expected ':' after the id (lines are 'ID: [ROLE|ANGLE] core {...}')", line,
                                    word.end() + 1, location)
            continue
        if (err := _check_id(match["id"], location)) is not None:
            yield err
            continue
        offset = match.start("prompt")
        try:
            yield parse_prompt(match["prompt"], id=match["id"], location=location)
        except PromptSyntaxError as exc:  # re-anchor the caret on the full line
            yield PromptSyntaxError(exc.message, line, exc.column + offset, location, match["id"])


def _read_jsonl(path: Path, lines: list[str]):
    for lineno, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        location = f"{path}:{lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield PromptSyntaxError(f"invalid JSON: {exc.msg}", line, exc.colno, location, field="record")
            continue
        if not isinstance(record, dict):
            yield PromptValidationError(location, "record", "each line must be a JSON object")
            continue
        pid, dsl = record.pop("id", None), record.pop("prompt", None)
        if isinstance(pid, int) and not isinstance(pid, bool):
            pid = str(pid)  # numeric ids are common in datasets; they become their decimal string
        if (err := _check_id(pid, location)) is not None:
            yield err
            continue
        if not isinstance(dsl, str):
            yield PromptValidationError(location, "prompt", "missing or not a string", prompt_id=pid)
            continue
        try:
            yield parse_prompt(dsl, id=pid, location=location, metadata=record)
        except PromptSyntaxError as exc:
            quote = _prompt_value_start(line)
            if quote is None:  # cannot happen for a line json.loads accepted; keep the DSL-relative column then
                yield PromptSyntaxError(exc.message, exc.text, exc.column, location, pid, field="prompt")
            else:
                yield PromptSyntaxError(exc.message, line, _raw_column(line, quote, exc.column), location, pid, field="prompt")


_WS = " \t\n\r"


def _skip_ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def _prompt_value_start(line: str) -> int | None:
    """Index of the opening quote of the top-level "prompt" value (the last one, as json.loads keeps the last)."""
    decoder, found = json.JSONDecoder(), None
    try:
        i = _skip_ws(line, 0)
        if line[i] != "{":
            return None
        i = _skip_ws(line, i + 1)
        while line[i] != "}":
            key, i = scanstring(line, i + 1)
            i = _skip_ws(line, _skip_ws(line, i) + 1)  # past ':'
            if key == "prompt" and line[i] == '"':
                found = i
            _, i = decoder.raw_decode(line, i)
            i = _skip_ws(line, i)
            if line[i] == ",":
                i = _skip_ws(line, i + 1)
    except (ValueError, IndexError):
        return found
    return found


def _raw_column(line: str, quote: int, column: int) -> int:
    """1-based column in the raw JSON line of the `column`-th character of the decoded string starting at `quote`."""
    i, n = quote + 1, 1
    while n < column and i < len(line) and line[i] != '"':
        if line[i] == "\\":
            if line[i + 1] == "u":
                high = int(line[i + 2:i + 6], 16)
                i += 6
                if 0xD800 <= high < 0xDC00 and line[i:i + 2] == "\\u":
                    i += 6  # a surrogate pair is one decoded character
            else:
                i += 2
        else:
            i += 1
        n += 1
    return i + 1


def write_vistar(prompts: list[Prompt], path: str | Path) -> None:
    from .parser import serialize_prompt

    lines = [f"{p.id}: {serialize_prompt(p)}" for p in prompts]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
