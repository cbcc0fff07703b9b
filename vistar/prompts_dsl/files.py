"""Read prompt files: `.vistar` (one `ID: PROMPT` per line) and JSONL (`id`, `prompt`, extra metadata).

Errors name `file:line:column`; for JSONL the column is in the raw JSON line (escapes accounted for),
so it matches what an editor shows. A `.json`/`.jsonl` file that is one JSON document (an array, or a
pretty-printed object) is refused as a whole with one error naming the file. Lines are decoded one by one: a line that is not UTF-8 is an error of
that line, never of the whole file.
"""
from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path

from .errors import PromptSyntaxError, PromptValidationError
from .model import Prompt
from .parser import LONE_SURROGATE, LONE_SURROGATE_ERROR, parse_prompt

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_LINE_RE = re.compile(r"^\s*(?P<id>[^\s:]+)\s*:\s*(?P<prompt>.*)$")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")  # .json: JSON Lines files are often named so
MAX_LINE_BYTES = 64 * 1024  # a longer line is an error naming it, never parsed (docs/dsl.md, "Limits")


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
        data = path.read_bytes()
    except OSError as exc:
        result.errors.append(PromptValidationError(str(path), "file", f"cannot read: {exc}"))
        return result
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        result.errors.append(PromptValidationError(str(path), "encoding", "the file is UTF-16 text; save it as UTF-8"))
        return result
    # a BOM written by some editors is not part of the first id; CRLF and CR end lines as LF does. Not
    # splitlines(): U+2028 and friends may sit inside a core
    raw = data.removeprefix(codecs.BOM_UTF8).replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    for n, line in enumerate(raw, start=1):
        if len(line) > MAX_LINE_BYTES:  # refused before decoding or parsing: memory stays bounded by the limit
            result.errors.append(PromptValidationError(f"{path}:{n}", "line", f"{len(line)} bytes, longer than the "
                                                        f"{MAX_LINE_BYTES} bytes a prompt line may hold"))
            raw[n - 1] = b""
    bad = {n: problem for n, line in enumerate(raw, start=1) if (problem := _not_utf8(line))}
    lines = [line.decode("utf-8", "replace") for line in raw]
    jsonl = path.suffix.lower() in JSONL_SUFFIXES
    if jsonl and (whole := _json_document(path, lines)) is not None:
        result.errors.append(whole)
        return result
    reader = _read_jsonl if jsonl else _read_vistar
    seen: dict[str, str] = {}
    for item in reader(path, lines, bad):
        if isinstance(item, Exception):
            result.errors.append(item)
        elif item.id in seen:
            result.errors.append(PromptValidationError(item.source, "id", f"duplicate id '{item.id}' (first at {seen[item.id]})",
                                                       prompt_id=item.id))
        else:
            seen[item.id] = item.source
            result.prompts.append(item)
    return result


def _json_document(path: Path, lines: list[str]) -> PromptValidationError | None:
    """The whole file refused when it is one JSON document rather than JSON Lines: a JSON array (first character
    `[`), or an object written over several lines. Read line by line, its lines are errors except a lone
    element line such as `{"id": "b", ...}`, which would load as a prompt while its neighbours fail."""
    text = "\n".join(lines)
    how = "write each prompt as one JSON object on its own line, e.g. {\"id\": \"a\", \"prompt\": \"[GD|TR] ...\"}"
    if text.lstrip()[:1] == "[":
        return PromptValidationError(str(path), "file", f"the file is a JSON array, not JSON Lines; {how}, without "
                                                        "the enclosing [ ] and the commas between objects")
    if sum(1 for line in lines if line.strip()) > 1 and text.lstrip()[:1] == "{":
        try:
            document = json.loads(text)
        except ValueError:  # several objects (JSON Lines) or a broken line: read line by line
            return None
        if isinstance(document, dict):
            return PromptValidationError(str(path), "file", f"the file is one JSON object written over several lines "
                                                            f"(pretty-printed), not JSON Lines; {how}")
    return None


def _not_utf8(raw: bytes) -> tuple[int, str] | None:
    """(1-based column, message) for a line that is not UTF-8, None for a good one."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = len(raw[:exc.start].decode("utf-8", "replace")) + 1
        return column, f"byte 0x{raw[exc.start]:02X} is not UTF-8 text; save the file as UTF-8"
    return None


def check_id(pid, location: str) -> PromptValidationError | None:
    """Why PID cannot be a prompt id (None when it can): prompt files and prompts given in Python alike."""
    if pid is None:
        return PromptValidationError(location, "id", "missing: each record needs an \"id\"")
    if not isinstance(pid, str) or not ID_RE.fullmatch(pid):
        return PromptValidationError(location, "id", f"invalid id {pid!r}: use letters, digits, '_', '.', '-' "
                                                     "(starting with a letter or digit)")
    return None


def _read_vistar(path: Path, lines: list[str], bad: dict[int, tuple[int, str]]):
    for lineno, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        location = f"{path}:{lineno}"
        match = _LINE_RE.match(line)
        if lineno in bad:  # the id, when readable, lets the engine say which images lost their prompt
            pid = match["id"] if match and ID_RE.fullmatch(match["id"]) else None
            yield PromptSyntaxError(bad[lineno][1], line, bad[lineno][0], location, pid, field="encoding")
            continue
        if not match:  # point just after the first word, where the ':' belongs
            word = re.match(r"\s*[^\s:]*", line)
            yield PromptSyntaxError("expected ':' after the id (lines are 'ID: [ROLE|ANGLE] core {...}')", line,
                                    word.end() + 1, location)
            continue
        if (err := check_id(match["id"], location)) is not None:
            yield err
            continue
        offset = match.start("prompt")
        try:
            yield parse_prompt(match["prompt"], id=match["id"], location=location)
        except PromptSyntaxError as exc:  # re-anchor the caret on the full line
            yield PromptSyntaxError(exc.message, line, exc.column + offset, location, match["id"])


def _read_jsonl(path: Path, lines: list[str], bad: dict[int, tuple[int, str]]):
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        location = f"{path}:{lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            record = exc
        pid = record.get("id") if isinstance(record, dict) else None
        if isinstance(pid, int) and not isinstance(pid, bool):
            pid = str(pid)  # numeric ids are common in datasets; they become their decimal string
        if lineno in bad:
            yield PromptSyntaxError(bad[lineno][1], line, bad[lineno][0], location,
                                    pid if isinstance(pid, str) and ID_RE.fullmatch(pid) else None, field="encoding")
            continue
        if isinstance(record, json.JSONDecodeError):
            yield PromptSyntaxError(f"invalid JSON: {record.msg}", line, record.colno, location, field="record")
            continue
        if not isinstance(record, dict):
            yield PromptValidationError(location, "record", "each line must be a JSON object (JSON Lines: one {...} per line)")
            continue
        dsl = record.pop("prompt", None)
        record.pop("id", None)
        if (err := check_id(pid, location)) is not None:
            yield err
            continue
        if LONE_SURROGATE.search(json.dumps(record, ensure_ascii=False) + (dsl if isinstance(dsl, str) else "")):
            yield PromptValidationError(location, "record", LONE_SURROGATE_ERROR, prompt_id=pid)
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
