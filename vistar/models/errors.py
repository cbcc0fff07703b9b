"""Errors of the model layer that the engine turns into `skipped` rows rather than crashes."""
from __future__ import annotations


class MissingWeightError(RuntimeError):
    """A pretrained weight is not on disk; the message names it and the command that fetches it."""

    def __init__(self, name: str, hint: str | None = None):
        self.name = name
        hint = hint or f"run `vistar models fetch {name}` or pass `--model-path {name}=PATH`"
        super().__init__(f"missing model weight '{name}': {hint}")
