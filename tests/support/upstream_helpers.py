"""The benchmarks' own evaluation scripts, loaded from the pinned copies in ../shared/data as their authors run
them: the module is executed whole, with only its network client and unused heavy imports replaced by stubs
that record what would be sent (independent of vistar's own reading of those files)."""
from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

from tests.support.protocol_helpers import shared
from vistar.runtime.scoped import scoped_entries


class Recorder:
    """Stands in for an HTTP / OpenAI client: records each request, answers with `reply`."""

    def __init__(self, reply: str = "ok"):
        self.calls: list[dict] = []
        self.reply = reply

    def create(self, **kwargs):
        self.calls.append(kwargs)
        message = types.SimpleNamespace(content=self.reply)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])

    def post(self, url, headers=None, json=None, **_):
        self.calls.append(json)
        body = {"choices": [{"message": {"content": self.reply}}]}
        return types.SimpleNamespace(raise_for_status=lambda: None, json=lambda: body)


def upstream_dir(bench: str) -> Path:
    return shared(bench) / "upstream"


def load_module(path: Path, extra_globals: dict | None = None, **stubs):
    """Execute the upstream file as a module (with `stubs` in sys.modules and `extra_globals` predefined, for
    the names its authors left as placeholders)."""
    spec = importlib.util.spec_from_file_location(f"upstream_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(extra_globals or {})
    sys.path.insert(0, str(path.parent))
    try:
        with scoped_entries(sys.modules, stubs):
            spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def fake_module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module
