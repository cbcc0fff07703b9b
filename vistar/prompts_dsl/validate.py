"""Semantic checks of parsed prompts against the ontology: codes, mask, required control keys, `set`."""
from __future__ import annotations

from dataclasses import dataclass, replace

from .derive import DERIVED_FROM, resolved_controls
from .errors import PromptSyntaxError, PromptValidationError
from .model import Prompt

SETS = ("core", "hard")


@dataclass
class Issue:
    location: str
    field: str
    message: str
    severity: str  # "error" | "warning"
    column: int | None = None
    excerpt: str = ""  # the offending line and a caret under `column`

    def __str__(self) -> str:
        where = f"{self.location}:{self.column}" if self.column else self.location
        text = f"{self.severity}: {where}: field '{self.field}': {self.message}"
        return f"{text}\n{self.excerpt}" if self.excerpt else text


def with_ontology_codes(prompt: Prompt, ontology) -> Prompt:
    """The prompt with its role and angle in the ontology's spelling when they differ only in case (`[gd|tr]` is
    `[GD|TR]`), so codes are case-insensitive in prompt files as on the command line; unknown codes stay as
    written for `validate_prompt` to report."""
    role = _canonical(prompt.role, ontology.roles)
    angle = _canonical(prompt.angle, ontology.angles)
    return prompt if (role, angle) == (prompt.role, prompt.angle) else replace(prompt, role=role, angle=angle)


def _canonical(code: str, known) -> str:
    if code in known:
        return code
    return next((k for k in known if k.casefold() == code.casefold()), code)


def validate_prompt(prompt: Prompt, ontology) -> list[Issue]:
    """Errors make a prompt unscorable; warnings (angle outside the role's mask) do not."""
    where = prompt.source or prompt.id or "<prompt>"
    issues: list[Issue] = []
    if prompt.role not in ontology.roles:
        issues.append(Issue(where, "role", f"unknown role code '{prompt.role}' (known: {', '.join(ontology.roles)})", "error"))
    if prompt.angle not in ontology.angles:
        issues.append(Issue(where, "angle", f"unknown angle code '{prompt.angle}' (known: {', '.join(ontology.angles)})", "error"))
    if issues:
        return issues
    if not ontology.relevant(prompt.role, prompt.angle):
        relevant = ", ".join(ontology.mask.get(prompt.role, [])) or "none"
        issues.append(Issue(where, "angle", f"angle {prompt.angle} is not relevant to role {prompt.role} under the mask "
                                            f"(relevant: {relevant}); it is scored but carries no role weight", "warning"))
    controls = resolved_controls(prompt, ontology)
    hints = DERIVED_FROM.get(prompt.angle, {})
    for alternatives in ontology.required_keys(prompt.angle):
        if not any(_present(controls.get(k)) for k in alternatives):
            keys = " or ".join(f"'{k}'" for k in alternatives)
            derived = [hints[k] for k in alternatives if k in hints]
            extra = f" (or {' / '.join(derived)})" if derived else ""
            issues.append(Issue(where, alternatives[0], f"angle {prompt.angle} requires control key {keys}{extra}", "error"))
    in_controls, in_metadata = prompt.controls.get("set"), prompt.metadata.get("set")
    if in_controls is not None and in_metadata is not None and str(in_controls) != str(in_metadata):
        issues.append(Issue(where, "set", f"set is '{in_controls}' in the controls but '{in_metadata}' in the metadata", "error"))
    elif prompt.set is not None and prompt.set not in SETS:
        issues.append(Issue(where, "set", f"set must be 'core' or 'hard', not '{prompt.set}'", "error"))
    return issues


def _present(value) -> bool:
    return value is not None and value != "" and value != []


def as_issue(exc: Exception) -> Issue:
    """A reading error (syntax, bad id, duplicate id) as an error `Issue`."""
    if isinstance(exc, PromptValidationError):
        return Issue(exc.location, exc.field, exc.message, "error")
    if isinstance(exc, PromptSyntaxError):
        return Issue(exc.location, exc.field, exc.message, "error", exc.column, exc.excerpt)
    return Issue(getattr(exc, "location", "<file>"), "syntax", str(exc), "error")
