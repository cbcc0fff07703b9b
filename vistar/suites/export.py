"""Export a suite for image generation: the natural-language cores (routing header and control block
stripped) with their ids, so images can be saved as `IMAGES/<model>/<prompt_id>.png`.

- `jsonl`: one object per prompt: `id`, `text` (the core, what the T2I model gets), `prompt` (the full
  prompt-language string), `role`, `angle`, `set`, plus the prompt's metadata. Because it has `id` and
  `prompt`, the same file is also a valid prompt file for `vistar score --prompts`.
- `txt`: `id<TAB>text` per line.
- `vistar`: the prompt-language file itself (`id: [ROLE|ANGLE] core {...}`), for `vistar score --prompts`.
"""
from __future__ import annotations

import json

from ..prompts_dsl import Prompt, serialize_prompt

FORMATS = ("jsonl", "txt", "vistar")


def export_record(prompt: Prompt) -> dict:
    record = {"id": prompt.id, "text": prompt.core, "prompt": serialize_prompt(prompt),
              "role": prompt.role, "angle": prompt.angle, "set": prompt.set}
    for key, value in prompt.metadata.items():
        record.setdefault(key, value)
    return record


def render(prompts: list[Prompt], fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format '{fmt}' (choose from {', '.join(FORMATS)})")
    if fmt == "jsonl":
        lines = [json.dumps(export_record(p), ensure_ascii=False, default=str) for p in prompts]
    elif fmt == "txt":
        lines = [f"{p.id}\t{' '.join(p.core.split())}" for p in prompts]
    else:
        lines = [f"{p.id}: {serialize_prompt(p)}" for p in prompts]
    return "".join(line + "\n" for line in lines)
