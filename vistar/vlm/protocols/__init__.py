"""Sibling-benchmark protocols by suite name, as registered in the engine's import list
(`vistar.engine.registry.PROTOCOLS`). Each has `load_items(data_dir)` returning items with `.to_prompt()`
(a prompt-language `Prompt` carrying `protocol=` and `item=` controls)."""
from __future__ import annotations

from ...engine import registry
from .base import Protocol

PROTOCOLS: dict[str, Protocol] = {name: registry.protocol(name) for name in registry.PROTOCOLS}


def protocol(name: str) -> Protocol:
    """Looked up in the registry at each call (a plugin registered after this module loaded is found too)."""
    if name not in registry.PROTOCOLS:
        raise KeyError(f"unknown protocol '{name}' (known: {', '.join(registry.PROTOCOLS)})")
    return registry.protocol(name)
