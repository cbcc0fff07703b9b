"""Judge-layer errors. A missing judge or questionnaire is a `skipped` row (like a missing weight), a judge
that failed after its retries is an `error` row; neither ends the run."""
from __future__ import annotations

from ..models.errors import MissingWeightError

HOW_TO_CONFIGURE = ("pass `--judge-url URL --judge-model MODEL_ID` (API key read from the environment variable "
                    "named by `--judge-key-env`, e.g. OPENAI_API_KEY); see docs/judge.md")


class JudgeUnavailable(MissingWeightError):
    """No judge is configured, or an input the judge needs (a questionnaire, a benchmark item) is absent."""

    def __init__(self, what: str, hint: str):
        self.name = what
        RuntimeError.__init__(self, f"{what}: {hint}")


class JudgeError(RuntimeError):
    """The judge did not give a usable answer after the bounded retries and re-asks."""


class ReplyFormatError(ValueError):
    """A judge reply that does not follow the requested format; the message says what is wrong (it is shown
    to the judge when the question is re-asked)."""


class DataError(ValueError):
    """A benchmark data file or questionnaire that cannot be used; the message names file, record and field."""
