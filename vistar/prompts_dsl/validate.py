"""Semantic checks of parsed prompts against the ontology: codes, mask, required control keys."""
from __future__ import annotations

from dataclasses import dataclass

from .derive import resolved_controls
from .errors import PromptValidationError
from .model import Prompt


@dataclass
class Issue:
    location: str
    field: str
    message: str
    severity: str  # "error" | "warning"

    def __str__(self) -> str:
        return f"{self.severity}: {self.location}: field '{self.field}': {self.message}"


def validate_prompt(prompt: Prompt, ontology) -> list[Issue]:
    where = prompt.source or prompt.id or "<prompt>"
    issues: list[Issue] = []
    if prompt.role not in ontology.roles:
        issues.append(Issue(where, "role", f"unknown role code '{prompt.role}' (known: {', '.join(ontology.roles)})", "error"))
    if prompt.angle not in ontology.angles:
        issues.append(Issue(where, "angle", f"unknown angle code '{prompt.angle}' (known: {', '.join(ontology.angles)})", "error"))
    if issues:
        return issues
    if not ontology.relevant(prompt.role, prompt.angle):
        issues.append(Issue(where, "angle", f"angle {prompt.angle} is not relevant to role {prompt.role} under the mask", "warning"))
    controls = resolved_controls(prompt, ontology)
    for alternatives in ontology.required_keys(prompt.angle):
        if not any(_present(controls.get(k)) for k in alternatives):
            keys = " or ".join(f"'{k}'" for k in alternatives)
            issues.append(Issue(where, alternatives[0], f"angle {prompt.angle} requires control key {keys}", "error"))
    set_value = prompt.set
    if set_value is not None and set_value not in ("core", "hard"):
        issues.append(Issue(where, "set", f"set must be 'core' or 'hard', not '{set_value}'", "error"))
    return issues


def _present(value) -> bool:
    return value is not None and value != "" and value != []


def as_issue(exc: Exception) -> Issue:
    if isinstance(exc, PromptValidationError):
        return Issue(exc.location, exc.field, exc.message, "error")
    return Issue(getattr(exc, "location", "<file>"), "syntax", str(exc), "error")
