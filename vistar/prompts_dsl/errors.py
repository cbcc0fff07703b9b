"""Errors that point at the exact place in a prompt file."""
from __future__ import annotations


class PromptSyntaxError(ValueError):
    def __init__(self, message: str, text: str, column: int, location: str = "<string>"):
        self.text, self.column, self.location, self.message = text, column, location, message
        caret = " " * (column - 1) + "^"
        super().__init__(f"{location}:{column}: {message}\n  {text}\n  {caret}")


class PromptValidationError(ValueError):
    """A semantic problem with one field of one prompt."""

    def __init__(self, location: str, field: str, message: str):
        self.location, self.field, self.message = location, field, message
        super().__init__(f"{location}: field '{field}': {message}")
