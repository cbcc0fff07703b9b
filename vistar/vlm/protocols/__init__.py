"""Sibling-benchmark protocols by suite name, as registered in the engine's import list
(`vistar.engine.registry.PROTOCOLS`). Each has `load_items(data_dir)` returning items with `.to_prompt()`
(a prompt-language `Prompt` carrying `protocol=` and `item=` controls)."""
from __future__ import annotations

from ...engine import registry
from .base import Protocol


def __getattr__(name: str) -> dict[str, Protocol]:
    """`PROTOCOLS`, every declaration by suite name, built when asked for rather than when this package is imported:
    the judge layer's parts live in this package, and one protocol whose module does not import on this machine
    must not take the others down with it (docs/engine.md)."""
    if name == "PROTOCOLS":
        return {key: registry.protocol(key) for key in registry.PROTOCOLS}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def protocol(name: str) -> Protocol:
    """Looked up in the registry at each call (a plugin registered after this module loaded is found too)."""
    if name not in registry.PROTOCOLS:
        raise KeyError(f"unknown protocol '{name}' (known: {', '.join(registry.PROTOCOLS)})")
    return registry.protocol(name)
