"""Parse and serialise single prompt strings with the lark grammar (`grammar.lark`, EBNF in docs/dsl.md)."""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from importlib import resources

from lark import Lark, UnexpectedEOF, UnexpectedInput
from lark.exceptions import VisitError
from lark.visitors import Transformer_NonRecursive

from .errors import PromptSyntaxError
from .model import Prompt

CODE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_INT_RE = re.compile(r"-?\d+")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON allows a lone \uD83D escape; no file or table can store it
LONE_SURROGATE_ERROR = "a \\uD800-\\uDFFF escape without its pair is not a character"


@lru_cache(maxsize=2)
def _parser(inline: bool = False) -> Lark:
    """inline: the transformer runs while parsing, so no tree of tokens is built (memory near the line's size);
    otherwise a tree, whose tokens locate a semantic error exactly."""
    grammar = resources.files("vistar.prompts_dsl").joinpath("grammar.lark").read_text()
    return Lark(grammar, parser="lalr", maybe_placeholders=False, transformer=_ToPrompt() if inline else None)


class _AtColumn(Exception):
    """A semantic error found while building the prompt, anchored at a token's column."""

    def __init__(self, message: str, column: int):
        super().__init__(message)
        self.message, self.column = message, column


class _ToPrompt(Transformer_NonRecursive):  # a tree of 10,000 pairs is 10,000 deep
    def start(self, items):
        header = items[0]
        core = next((i for i in items[1:] if isinstance(i, str)), "")
        controls = next((i for i in items[1:] if isinstance(i, dict)), {})
        return header[0], header[1], core, controls

    def header(self, items):
        return str(items[0]), str(items[1])

    def core(self, items):
        return re.sub(r"\\([{}\\])", r"\1", str(items[0])).strip()

    def controls(self, items):
        return items[0] if items else {}

    def pairs(self, items):
        """[pair] or [the dict so far, pair]: the dict grows one pair at a time."""
        out = items[0] if len(items) == 2 else {}
        key, value = items[-1]
        if str(key) in out:
            raise _AtColumn(f"duplicate control key '{key}'", key.column)
        out[str(key)] = value
        return out

    def pair(self, items):
        return items[0], items[1]  # keep the KEY token: its column locates duplicate-key errors

    def list(self, items):
        return list(items)

    def string(self, items):
        value = json.loads(str(items[0]), strict=False)  # strict=False: a raw tab inside quotes is just a tab
        if LONE_SURROGATE.search(value):
            raise _AtColumn(LONE_SURROGATE_ERROR, items[0].column)
        return value

    def number(self, items):
        text = str(items[0])
        try:  # an integer past Python's 4300-digit limit (or past a float's range, below) is as unusable as 1e309
            value: int | float | None = int(text) if _INT_RE.fullmatch(text) else float(text)
        except ValueError:
            value = None
        if value is None or not _fits_a_float(value):
            shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} characters)"
            raise _AtColumn(f"number {shown} is out of range", items[0].column)
        return value


def parse_prompt(text: str, *, id: str | None = None, location: str = "<string>", metadata: dict | None = None) -> Prompt:
    """Parse `[ROLE|ANGLE] core {k="v", ...}`; errors carry location, column and a caret."""
    try:
        role, angle, core, controls = _parser(inline=True).parse(text)
    except Exception:  # any problem: parsed again below, building the tree that locates it as it always did
        pass
    else:
        return Prompt(role=role, angle=angle, core=core, controls=controls, id=id, metadata=metadata or {}, source=location)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        at_end = isinstance(exc, UnexpectedEOF) or getattr(getattr(exc, "token", None), "type", "") == "$END"
        column = len(text) + 1 if at_end or exc.column < 1 else exc.column
        raise PromptSyntaxError(_describe(exc, text, column), text, column, location, id) from None
    try:
        role, angle, core, controls = _ToPrompt().transform(tree)
    except VisitError as exc:
        orig = exc.orig_exc
        column = orig.column if isinstance(orig, _AtColumn) else 1
        message = orig.message if isinstance(orig, _AtColumn) else f"{type(orig).__name__}: {orig}"
        raise PromptSyntaxError(message, text, column, location, id) from None
    return Prompt(role=role, angle=angle, core=core, controls=controls, id=id, metadata=metadata or {}, source=location)


_NAMES = {"LSQB": "'['", "VBAR": "'|'", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'", "EQUAL": "'='",
          "COMMA": "','", "CODE": "a role/angle code", "KEY": "a key", "STRING": "a \"string\"",
          "NUMBER": "a number", "CORE_TEXT": "text", "$END": "end of prompt",
          "<END-OF-FILE>": "end of prompt"}


def _describe(exc: UnexpectedInput, text: str, column: int) -> str:
    """What was expected, plus a hint for the mistakes people actually make in the core."""
    char = text[column - 1] if 0 < column <= len(text) else ""
    block = _first_unescaped_brace(text)
    in_core = (block is None or column - 1 < block) and text[:column - 1].count("]") >= 1
    if char == "\\" and in_core:
        return "lone backslash in the core: write '\\\\' for a backslash, '\\{' or '\\}' for a brace"
    if char == "}" and in_core:
        return "unescaped '}' in the core: write '\\}' (and '\\{') for literal braces"
    expected = set(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or [])
    before = text[:column - 1]
    if before.rfind("[") <= before.rfind("]"):  # not inside an open list: LALR's merged lookahead lists ']' anyway
        expected.discard("RSQB")
    expected = sorted(expected)
    wanted = ", ".join(dict.fromkeys(_NAMES.get(e, e) for e in expected))
    found = "end of prompt" if not char else repr(char)
    message = f"unexpected {found}; expected {wanted}" if wanted else f"unexpected {found}"
    if block is not None and block < column - 1 and "}" not in text[block:column - 1]:  # inside the first block
        message += f" (if the '{{' at column {block + 1} is text, not controls, write '\\{{')"
    return message


def _first_unescaped_brace(text: str) -> int | None:
    """0-based index of the '{' that opens the control block: the first one not escaped as '\\{' (a '\\\\' is an
    escaped backslash, so the brace after it is not escaped)."""
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "{":
            return i
        i += 1
    return None


def _value(value, nested: bool = False) -> str:
    if isinstance(value, list) and not nested:
        return "[" + ", ".join(_value(v, nested=True) for v in value) + "]"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        kind = "nested lists" if isinstance(value, list) else type(value).__name__
        raise TypeError(f"control values must be strings, numbers or lists of them, not {kind}")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"control numbers must be finite, not {value!r}")
    if isinstance(value, int) and not _fits_a_float(value):
        raise ValueError(f"control integers must fit a float (the parser refuses larger ones), not {value.bit_length()}-bit")
    return repr(value)


def _fits_a_float(value: int | float) -> bool:
    """Finite, and (an int) within a float's range: what the parser reads and the serializer may write."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def serialize_prompt(prompt: Prompt) -> str:
    """Canonical text form; `parse_prompt(serialize_prompt(p))` equals `p` (ids, metadata, source aside).

    Raises ValueError/TypeError for what the grammar cannot express (bad codes or keys, a line break in the
    core, non-finite numbers, integers past a float's range, nested lists) rather than writing a line that would not parse back."""
    for what, code in (("role", prompt.role), ("angle", prompt.angle)):
        if not CODE_RE.fullmatch(code):
            raise ValueError(f"{what} code {code!r} is not a valid code")
    if "\n" in prompt.core or "\r" in prompt.core:
        raise ValueError("the core cannot contain a line break")
    core = re.sub(r"([{}\\])", r"\\\1", prompt.core.strip())
    text = f"[{prompt.role}|{prompt.angle}] {core}".rstrip()
    if prompt.controls:
        for key in prompt.controls:
            if not KEY_RE.fullmatch(key):
                raise ValueError(f"control key {key!r} is not a valid key")
        text += " {" + ", ".join(f"{k}={_value(v)}" for k, v in prompt.controls.items()) + "}"
    return text
