"""Helpers shared by the reply parsers: find the judge's answer fields and check small integer scores.

Judges wrap JSON in prose or code fences, write Python-style dicts, trailing commas, keys in another case
("Aesthetic Quality"), nest scores (`{"consistency": {"score": 2}}`) or give `Key: N` lines instead of JSON;
all of that is read. Anything ambiguous, cut off or out of range is a ReplyFormatError (re-asked, then
recorded as a failure), never a guessed or clamped value.
"""
from __future__ import annotations

import ast
import json
import math
import re

from .errors import ReplyFormatError

_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_JSON_WORDS = re.compile(r"\b(true|false|null)\b")
_PYTHON = {"true": "True", "false": "False", "null": "None"}
_STRING_QUOTES = ('"', "\"'")  # JSON strings, then Python-dict strings as well
# what may not follow a `Key: N` number: more digits (no backtracking to a shorter number) or a range's end
_NOT_A_RANGE = r"(?!\d|\.\d|\s*(?:[-\u2010-\u2015\u2212~]|to\b|through\b)\s*-?\d)"  # `2.` ends a sentence
# "2", "2/2", "2 out of 2", "Score: 1", "3 points"
_SCORE_TEXT = re.compile(r"(?:score\s*[:=]?\s*)?(-?\d+(?:\.\d+)?)\s*(?:(?:/|out of)\s*(\d+(?:\.\d+)?))?\s*(?:points?|pts)?\.?", re.I)


def json_object(text: str) -> dict:
    """The answer object of the reply: the last well-formed `{...}` object in reading order, so the last
    object of the last code fence when the judge fences its answer, and a final answer after a draft (fenced
    or not) wins over the draft. Python-dict quoting and trailing commas are accepted; braces inside strings
    are text."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyFormatError("empty reply")
    _require_closed(text)
    found = list(_objects(text))  # fenced or not: a fence's backticks are never inside an object
    if not found:
        raise _NoObject("no JSON object found in the reply")
    return found[-1]


class _NoObject(ReplyFormatError):
    """The reply holds no JSON object at all (a `Key: N` reply may still be read)."""


def _require_closed(text: str) -> None:
    """A `{` that is never closed means the judge was stopped mid-object (max_tokens): its final answer is
    lost, even when a complete object (an example, an earlier draft) comes before it. Braces inside strings are
    text: JSON's double-quoted ones, or a Python dict's single-quoted ones too (PhyBench asks for that style,
    and `{'reason': 'label reads {g'}` is a whole dict to `ast.literal_eval`)."""
    start = text.find("{")
    while start != -1:
        close = next((c for quotes in _STRING_QUOTES if (c := _closing_brace(text, start, quotes)) is not None), None)
        if close is None:
            raise ReplyFormatError("the reply is cut off (a JSON object is not closed)")
        start = text.find("{", close + 1)


def _objects(chunk: str):
    """Top-level objects in reading order (a parsed object's inner braces are not revisited). The end of the
    object starting at a `{` is found with strings read as text (double quotes, then also single quotes for
    Python dicts), falling back to plain brace counting for a dict whose quoting is itself broken."""
    start = chunk.find("{")
    while start != -1:
        obj, end = None, None
        for quotes in (*_STRING_QUOTES, ""):
            close = _closing_brace(chunk, start, quotes)
            if close is not None and close != end:
                end, obj = close, _load(chunk[start:close + 1])
                if isinstance(obj, dict):
                    break
        if isinstance(obj, dict):
            yield obj
            start = chunk.find("{", end + 1)
        else:
            start = chunk.find("{", start + 1)


def _closing_brace(chunk: str, start: int, quotes: str) -> int | None:
    """Index of the `}` closing the `{` at `start`; characters inside strings delimited by any of `quotes`
    (backslash escapes honoured) are text. None when it never closes."""
    depth, quote, escaped = 0, None, False
    for i in range(start, len(chunk)):
        ch = chunk[i]
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in quotes:
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _load(piece: str):
    for attempt in (piece, _TRAILING_COMMA.sub(r"\1", piece)):
        try:
            return json.loads(attempt, object_pairs_hook=_unique_keys)
        except ReplyFormatError:
            raise
        except ValueError:
            pass
    for attempt in (piece, _JSON_WORDS.sub(lambda m: _PYTHON[m.group(1)], piece)):
        try:
            value = ast.literal_eval(attempt)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        for node in ast.walk(ast.parse(attempt, mode="eval")):
            if isinstance(node, ast.Dict):
                _unique_keys([(ast.literal_eval(k), ast.literal_eval(v)) for k, v in zip(node.keys, node.values)
                              if k is not None])
        return value
    return None


def _unique_keys(pairs: list) -> dict:
    """A JSON object whose key is written twice with different values (`{"consistency": 2, "consistency": 0}`)
    is ambiguous; parsers would silently keep the last."""
    out: dict = {}
    for k, v in pairs:
        if k in out and (out[k] != v or type(out[k]) is not type(v)):
            raise ReplyFormatError(f"'{k}' is given more than once with different values "
                                   f"({out[k]!r}, {v!r}); the reply is ambiguous")
        out[k] = v
    return out


def _norm(key) -> str:
    """Key identity for matching: case, spaces, underscores and hyphens do not matter."""
    return re.sub(r"[^a-z0-9]", "", str(key).lower())


def _label(name: str) -> re.Pattern:
    """`Name: N` written as text (`**Aesthetic Quality**: 1`, `scene_score = 2`, `Consistency (0-2): 2`).
    A number that starts a range (`Consistency: 0-2 scale`, `0–2`, `0 to 2`) states the scale, not the score,
    and is not read."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return re.compile(r"(?<![a-z0-9])" + r"[\s_-]*".join(map(re.escape, words))
                      + r"[\s*_\"'`]*(?:\([^)\n]*\)[\s*_\"'`]*)?[:=：]\s*[*_\"'`]*\s*"
                      + r"(-?\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?)" + _NOT_A_RANGE, re.I)


class Reply:
    """The answer fields of one reply: the last JSON / Python-dict object in it, or, when it holds none,
    numeric `Key: N` lines. A reply with an unclosed `{` anywhere is cut off and rejected as a whole."""

    def __init__(self, text: str):
        if not isinstance(text, str) or not text.strip():
            raise ReplyFormatError("empty reply")
        _require_closed(text)
        try:
            self.obj: dict | None = json_object(text)
        except _NoObject:
            self.obj = None
        self.text = text

    def get(self, key: str, aliases: tuple[str, ...] = (), interpret=None):
        """The value of `key`, else of its first alias present, at the top level or one level down. When
        several places hold it (`{"a": {"consistency": 2}, "b": {"consistency": 0}}`, or keys equal up to
        case/spacing such as `"Consistency"` and `"consistency"`) their values must agree — after
        `interpret(value)` when given — or the reply is ambiguous and rejected."""
        if self.obj is not None:
            nested = [v for v in self.obj.values() if isinstance(v, dict)]
            for name in (key, *aliases):
                top = [v for k, v in self.obj.items() if _norm(k) == _norm(name)]
                inner = [v for scope in nested for k, v in scope.items() if _norm(k) == _norm(name)]
                if top or inner:
                    return _agreed(key, top + _readable(inner, interpret, bool(top)), interpret)
            raise ReplyFormatError(f"missing '{key}'")
        values = sorted({m.group(1).replace(" ", "") for n in (key, *aliases) for m in _label(n).finditer(self.text)})
        if not values:
            raise ReplyFormatError(f"missing '{key}' (no JSON object and no '{key}: N' line in the reply)")
        if interpret is not None:  # `Consistency: 2` and a closing `consistency: 2/2` are one answer
            return _agreed(key, values, interpret)
        if len(values) > 1:
            raise ReplyFormatError(f"'{key}' is given more than once with different values ({', '.join(values)})")
        return values[0]


def _readable(inner: list, interpret, have_top: bool) -> list:
    """Nested values that read as an answer. Beside a top-level answer, a nested one that does not read
    (`"details": {"consistency": "fully consistent"}`) is an explanation, not a second answer."""
    if interpret is None or not have_top:
        return inner
    kept = []
    for value in inner:
        try:
            interpret(value)
        except ReplyFormatError:
            continue
        kept.append(value)
    return kept


def _agreed(key: str, found: list, interpret):
    """The one value all places holding `key` agree on (after `interpret`), else a ReplyFormatError."""
    values = [interpret(v) for v in found] if interpret is not None else found
    distinct = []
    for v in values:
        if not any(v == d and type(v) is type(d) for d in distinct):
            distinct.append(v)
    if len(distinct) > 1:
        raise ReplyFormatError(f"'{key}' is given more than once with different values "
                               f"({', '.join(repr(v) for v in found)}); the reply is ambiguous")
    return distinct[0]


def int_score(reply: Reply, key: str, low: int, high: int, aliases: tuple[str, ...] = ()) -> int:
    """The reply's `key` as an integer in [low, high]: numbers, numeric text ("2", "2/2", "Score: 2") and
    `{"score": N}` objects are read; fractions, other scales, out-of-range values and a key given in several
    places with different scores are rejected."""
    return reply.get(key, aliases, interpret=lambda value: _int_value(value, key, low, high))


def _int_value(given, key: str, low: int, high: int) -> int:
    value = given
    bad = ReplyFormatError(f"'{key}' must be an integer from {low} to {high}, got {given!r}")
    if isinstance(value, dict):
        scores = [v for k, v in value.items() if _norm(k) == "score"]
        if not scores:
            raise bad
        return _agreed(key, scores, lambda v: _int_value(v, key, low, high))
    if isinstance(value, str):
        m = _SCORE_TEXT.fullmatch(value.strip())
        if m is None:
            raise bad
        value, scale = float(m.group(1)), m.group(2)
        if scale is not None and float(scale) != high:
            raise ReplyFormatError(f"'{key}' was given on a 0-{scale} scale ({given!r}); it must be an integer from {low} to {high}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise bad
    if value != int(value) or not low <= value <= high:
        raise bad
    return int(value)


def boolean(value, what: str) -> bool:
    """true/false, 1/0 or yes/no (any case, a trailing full stop allowed)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    word = value.strip().rstrip(".").strip().lower() if isinstance(value, str) else None
    if word in ("true", "yes", "1", "false", "no", "0"):
        return word in ("true", "yes", "1")
    raise ReplyFormatError(f"{what} must be true or false, got {value!r}")
