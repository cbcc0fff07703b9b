"""Helpers shared by the reply parsers: pull a JSON object out of free text and check small integer scores.
Judges wrap JSON in prose or code fences, or write Python-style dicts; all of that is accepted, anything
ambiguous is a ReplyFormatError (re-asked)."""
from __future__ import annotations

import ast
import json
import re

from .errors import ReplyFormatError

_FENCE = re.compile(r"```(?:json|python)?\s*(.*?)```", re.S)


def json_object(text: str) -> dict:
    """The last well-formed `{...}` object in the reply (code fences and Python-dict quoting accepted)."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyFormatError("empty reply")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for chunk in candidates:
        for obj in reversed(list(_objects(chunk))):
            return obj
    raise ReplyFormatError("no JSON object found in the reply")


def _objects(chunk: str):
    """Top-level objects in reading order (a parsed object's inner braces are not revisited)."""
    start = chunk.find("{")
    while start != -1:
        depth, end = 0, None
        for i in range(start, len(chunk)):
            depth += {"{": 1, "}": -1}.get(chunk[i], 0)
            if depth == 0:
                end = i
                break
        obj = _load(chunk[start:end + 1]) if end is not None else None
        if isinstance(obj, dict):
            yield obj
            start = chunk.find("{", end + 1)
        else:
            start = chunk.find("{", start + 1)


def _load(piece: str):
    try:
        return json.loads(piece)
    except ValueError:
        pass
    try:
        return ast.literal_eval(piece)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def int_score(obj: dict, key: str, low: int, high: int, aliases: tuple[str, ...] = ()) -> int:
    """obj[key] as an integer in [low, high]; `aliases` are other spellings judges use for the key."""
    for name in (key, *aliases):
        if name in obj:
            value = obj[name]
            break
    else:
        raise ReplyFormatError(f"missing '{key}'")
    if isinstance(value, bool):
        raise ReplyFormatError(f"'{key}' must be an integer from {low} to {high}, got {value!r}")
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not low <= value <= high:
        raise ReplyFormatError(f"'{key}' must be an integer from {low} to {high}, got {value!r}")
    return value


def boolean(value, what: str) -> bool:
    """true/false, 1/0 or yes/no (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise ReplyFormatError(f"{what} must be true or false, got {value!r}")
