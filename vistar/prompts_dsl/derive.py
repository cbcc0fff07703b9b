"""Ground truth that an angle may take from the core when its control key is absent.

Each deriver maps a prompt to control values it can infer; explicit controls always win.
"""
from __future__ import annotations

import importlib
import re
from typing import Callable

from .model import METADATA_KEYS, Prompt

_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')


def _tr_text(prompt: Prompt, ontology) -> dict:
    """TR: the double-quoted spans of the core, joined by a space, are the text to render."""
    spans = [a or b for a, b in _QUOTED.findall(prompt.core)]
    return {"text": " ".join(spans)} if spans else {}


def _plugin(where: str) -> Callable[[Prompt, object], dict]:
    """A deriver that lives with its angle's metric ("module:function", loaded on first use), so the prompt
    language does not import the metrics (which import the contracts the prompt language sits under)."""
    def derive(prompt: Prompt, ontology) -> dict:
        module, attr = where.split(":")
        return getattr(importlib.import_module(module), attr)(prompt, ontology)

    return derive


# LI: the anchor vocabulary lives with the LI geometry; CSE: the shot-list reader with the CSE metric.
DERIVERS: dict[str, Callable[[Prompt, object], dict]] = {
    "TR": _tr_text, "LI": _plugin("vistar.metrics.light_geometry:derive_light"),
    "CSE": _plugin("vistar.metrics.cse:derive_shots")}
# angle -> control key -> where the deriver looks when the key is absent (named in validation errors)
DERIVED_FROM: dict[str, dict[str, str]] = {"TR": {"text": "a double-quoted span in the core"},
                                           "LI": {"light": "a light-anchor phrase in the core (`vistar ontology show`)"},
                                           "CSE": {"shots": "a `lead-in: shot; shot; ...` list in the core"}}


def resolved_controls(prompt: Prompt, ontology=None) -> dict:
    """Controls with derived ground truth filled in where the prompt left them out; metadata keys (`set`) dropped."""
    derive = DERIVERS.get(prompt.angle)
    derived = derive(prompt, ontology) if derive else {}
    return {k: v for k, v in {**derived, **prompt.controls}.items() if k not in METADATA_KEYS}
