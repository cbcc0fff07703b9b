"""Which characters may reach a terminal as they are: one rule for the CLI's messages (`cli.common.printable`)
and for the lines of a run's problems.jsonl (`engine.runner`), each writing the others in its own escape form."""
from __future__ import annotations

import unicodedata
from typing import Callable

# controls, format (bidi overrides, zero-width), surrogates, private use, line/paragraph separators
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in UNSAFE_CATEGORIES


def escape_unsafe(text: str, escape: Callable[[str], str], keep: str = "") -> str:
    """TEXT with every unsafe character not in KEEP replaced by `escape(ch)`."""
    return "".join(escape(ch) if ch not in keep and unsafe(ch) else ch for ch in text)


def python_escape(ch: str) -> str:
    """CH as the CLI prints it: a Python escape (`\\x1b`, `\\u202e`, `\\U0001f600`)."""
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def json_escape(ch: str) -> str:
    """CH as a JSON string escape: `\\uXXXX`, or its UTF-16 surrogate pair above the BMP (what JSON allows)."""
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
