"""Parse and serialise single prompt strings with the lark grammar."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources

from lark import Lark, Transformer, UnexpectedInput

from .errors import PromptSyntaxError
from .model import Prompt


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("vistar.prompts_dsl").joinpath("grammar.lark").read_text()
    return Lark(grammar, parser="lalr", maybe_placeholders=False)


class _ToPrompt(Transformer):
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
        out = {}
        for key, value in items:
            if key in out:
                raise ValueError(f"duplicate control key '{key}'")
            out[key] = value
        return out

    def pair(self, items):
        return str(items[0]), items[1]

    def list(self, items):
        return list(items)

    def string(self, items):
        return json.loads(str(items[0]))

    def number(self, items):
        text = str(items[0])
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def parse_prompt(text: str, *, id: str | None = None, location: str = "<string>", metadata: dict | None = None) -> Prompt:
    """Parse `[ROLE|ANGLE] core {k="v", ...}`; errors carry location, column and a caret."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise PromptSyntaxError(_describe(exc), text, exc.column if exc.column > 0 else 1, location) from None
    try:
        role, angle, core, controls = _ToPrompt().transform(tree)
    except Exception as exc:  # lark wraps transformer errors
        cause = exc.__context__ or exc
        raise PromptSyntaxError(str(cause), text, 1, location) from None
    return Prompt(role=role, angle=angle, core=core, controls=controls, id=id, metadata=metadata or {}, source=location)


def _describe(exc: UnexpectedInput) -> str:
    expected = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or [])
    names = {"LSQB": "'['", "VBAR": "'|'", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'", "EQUAL": "'='",
             "COMMA": "','", "CODE": "a role/angle code", "KEY": "a key", "STRING": "a \"string\"",
             "NUMBER": "a number", "CORE_TEXT": "text"}
    wanted = ", ".join(dict.fromkeys(names.get(e, e) for e in expected))
    return f"unexpected input; expected {wanted}" if wanted else "unexpected input"


def _value(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"control values must be strings, numbers or lists of them, not {type(value).__name__}")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def serialize_prompt(prompt: Prompt) -> str:
    """Canonical text form; `parse_prompt(serialize_prompt(p))` equals `p` (ids and metadata aside)."""
    core = re.sub(r"([{}\\])", r"\\\1", prompt.core)
    text = f"[{prompt.role}|{prompt.angle}] {core}".rstrip()
    if prompt.controls:
        text += " {" + ", ".join(f"{k}={_value(v)}" for k, v in prompt.controls.items()) + "}"
    return text
