"""Offline phase: one LLM call per prompt writes its questionnaire (text only, temperature 0), which is
validated, safely repaired, and stored by prompt fingerprint. Existing questionnaires are never rewritten
unless asked, so the questions stay identical across runs."""
from __future__ import annotations

from dataclasses import replace

from ...prompts_dsl.model import Prompt
from ..errors import DataError, ReplyFormatError
from ..replies import json_object
from ..types import JudgeRequest, text_hash
from .questionnaire import Questionnaire, repair

PROTOCOL = "hwpq-generate@1"
ANGLE_FOCUS = {
    "SF": "style fusion: whether the named styles are each recognisable and genuinely blended rather than pasted side by side",
    "CUL": ("cultural-historical fidelity: whether attire, architecture, objects, symbols and customs match the named "
            "culture and period, without anachronisms or mixing with other cultures"),
    "MA": "material accuracy: whether each object's material shows the right optical and physical cues (reflectance, transparency, texture, weight, deformation)",
}
SYSTEM = ("You design evaluation questionnaires for text-to-image models. You write concrete yes/no questions "
          "that a vision-language model can answer by looking at one image.")
USER = """Write a hierarchical questionnaire to judge an image generated for this prompt.

Prompt: {core}
Aspect to judge: {focus}
Details given with the prompt: {controls}

Use four levels (omit a level only if the prompt gives it nothing to check):
- L1 core bearers: are the main subjects and the required styles / cultural elements / materials present?
- L2 per-object attributes: does each subject carry the attributes the aspect requires?
- L3 interplay / fusion: do the elements combine as required (styles blended, cultural elements consistent with each other, materials interacting plausibly)?
- L4 overall impression: does the image as a whole convey the requested aspect?
Each level has 1 to 4 question pairs. A pair is a positive question (answer Yes = requirement met) and a
mutually exclusive negative question (answer Yes = requirement violated); they must not both be answerable Yes.
Give each level a weight and each pair a weight within its level; weights are numbers in (0, 1] and sum to 1
at each level of the hierarchy.

Reply with only a JSON object of this form:
{{"levels": [{{"level": "L1", "weight": 0.3, "pairs": [{{"id": "L1.1", "weight": 0.5, "positive": "Is ...?", "negative": "Is ...?"}}]}}]}}"""
TEMPLATE_HASH = text_hash(SYSTEM, USER)


def request(prompt: Prompt) -> JudgeRequest:
    return JudgeRequest(protocol=PROTOCOL, item_id=prompt.fingerprint, template_hash=TEMPLATE_HASH, system=SYSTEM,
                        user=_user(prompt), max_tokens=2048, text_fixed_by_id=TEXT_FIXED_BY_ID)


def _user(prompt: Prompt) -> str:
    controls = ", ".join(f"{k}={v}" for k, v in prompt.controls.items() if k not in ("protocol", "item", "set")) or "none"
    focus = ANGLE_FOCUS.get(prompt.angle, "faithfulness of the image to every requirement of the prompt")
    return USER.format(core=prompt.core, focus=focus, controls=controls)


def _rendering() -> str:
    """How the request text is built from the prompt (its angle's focus text included), on fixed examples."""
    probes = [Prompt("T2I", angle, "a red cup", {"material": "glass", "set": "core"}) for angle in (*ANGLE_FOCUS, "TR")]
    return text_hash(SYSTEM, *(_user(p) for p in probes))


# The text is fixed by the template hash and the prompt fingerprint (role, angle, core, controls) in the item
# id, so an answer cached under the key of older versions (without the text hash) is reused, while the
# rendering (the focus texts included, which the template hash does not cover) is still theirs.
TEXT_FIXED_BY_ID = _rendering() == "9c179a5e023a3ec7"


def parse(text: str) -> dict:
    """The repaired questionnaire as JSON (its `repairs` list says what was fixed); an unusable reply is re-asked."""
    obj = json_object(text)
    try:
        q, _ = repair(obj, "generated questionnaire")
    except DataError as exc:
        raise ReplyFormatError(str(exc)) from None
    return q.to_json()


def from_reply(parsed: dict) -> Questionnaire:
    q, _ = repair(parsed, "generated questionnaire")
    return replace(q, repairs=tuple(parsed.get("repairs") or ()))


def finish(q: Questionnaire, prompt: Prompt, model: str) -> Questionnaire:
    """Attach the prompt identity and provenance before storing."""
    return replace(q, prompt=prompt.core, prompt_fingerprint=prompt.fingerprint, angle=prompt.angle if prompt.angle in ANGLE_FOCUS else None,
                   source={"generator": model, "template_hash": TEMPLATE_HASH})
