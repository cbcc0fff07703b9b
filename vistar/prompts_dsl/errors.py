"""Errors that point at the exact place in a prompt file."""
from __future__ import annotations

import unicodedata

from ..textsafe import python_escape, unsafe

EXCERPT_CHARS = 160  # longer lines are shown around the error's column only


def caret_line(text: str, column: int) -> str:
    """Spaces up to `column` (1-based) then '^', aligned under the line as the CLI prints it: tabs kept, a
    double-width character two spaces, a combining mark none, and a control or bidi character as wide as the
    escape (`\\x1b`) the CLI writes in its place."""
    pad = []
    for ch in text[:max(0, column - 1)]:
        if ch == "\t":
            pad.append("\t")
        elif unsafe(ch):
            pad.append(" " * len(python_escape(ch)))
        elif unicodedata.combining(ch):
            continue
        else:
            pad.append("  " if unicodedata.east_asian_width(ch) in ("W", "F") else " ")
    return "".join(pad) + "^"


class PromptSyntaxError(ValueError):
    """`location:column: message`, then the offending text and a caret under the column (1-based).

    `location` is `file:line` (or `<string>`); `prompt_id` is set when the line's id could still be read,
    so the engine can tell which images lost their prompt."""

    def __init__(self, message: str, text: str, column: int, location: str = "<string>", prompt_id: str | None = None,
                 field: str = "syntax"):
        self.text, self.column, self.location, self.message = text, column, location, message
        self.prompt_id, self.field = prompt_id, field
        super().__init__(f"{location}:{column}: {message}\n{self.excerpt}")

    @property
    def excerpt(self) -> str:
        text, column = self.text, self.column
        if len(text) > EXCERPT_CHARS:  # a very long line: the part around the column, cut ends marked '…'
            start = max(0, min(column - 1 - EXCERPT_CHARS // 2, len(text) - EXCERPT_CHARS))
            end = start + EXCERPT_CHARS
            text = ("…" if start else "") + text[start:end] + ("…" if end < len(self.text) else "")
            column += (1 if start else 0) - start
        return f"  {text}\n  {caret_line(text, column)}"


class PromptValidationError(ValueError):
    """A semantic problem with one field of one prompt."""

    def __init__(self, location: str, field: str, message: str, prompt_id: str | None = None):
        self.location, self.field, self.message, self.prompt_id = location, field, message, prompt_id
        super().__init__(f"{location}: field '{field}': {message}")
