"""The prompt language: `[ROLE|ANGLE] natural-language core {key="value", ...}`."""
from .derive import resolved_controls
from .errors import PromptSyntaxError, PromptValidationError
from .files import PromptFile, read_prompts, write_vistar
from .model import Prompt
from .parser import parse_prompt, serialize_prompt
from .validate import Issue, validate_prompt

__all__ = ["Prompt", "PromptFile", "PromptSyntaxError", "PromptValidationError", "Issue", "parse_prompt",
           "serialize_prompt", "read_prompts", "write_vistar", "validate_prompt", "resolved_controls"]
