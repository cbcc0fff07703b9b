"""Sibling-benchmark protocols by suite name. Each has `load_items(data_dir)` returning items with
`.to_prompt()` (a prompt-language `Prompt` carrying `protocol=` and `item=` controls)."""
from __future__ import annotations

from . import genexam, phybench, unieval, wise_legacy, wise_verified
from .base import Protocol

PROTOCOLS: dict[str, Protocol] = {m.NAME: m.PROTOCOL for m in (wise_legacy, wise_verified, genexam, unieval, phybench)}


def protocol(name: str) -> Protocol:
    if name not in PROTOCOLS:
        raise KeyError(f"unknown protocol '{name}' (known: {', '.join(PROTOCOLS)})")
    return PROTOCOLS[name]
