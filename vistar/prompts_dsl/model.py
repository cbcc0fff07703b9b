"""The parsed prompt: routing header, natural-language core, control parameters, metadata."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Union

Scalar = Union[str, int, float]
Value = Union[Scalar, list]

# Control keys that describe the prompt rather than the image; they never reach a scorer's ground truth.
METADATA_KEYS = ("set",)


@dataclass(frozen=True)
class Prompt:
    role: str
    angle: str
    core: str
    controls: dict[str, Value] = field(default_factory=dict)
    id: str | None = None
    metadata: dict = field(default_factory=dict)
    source: str | None = None  # "file:line" where it was read, for error messages

    @property
    def set(self) -> str | None:
        """Benchmark split (`core`/`hard`): a control key or a metadata field."""
        value = self.controls.get("set", self.metadata.get("set"))
        return None if value is None else str(value)

    @property
    def fingerprint(self) -> str:
        """Stable hash of what a result row takes from the prompt: role, angle, core, controls and `set`
        (not id, source or other metadata), so an edited prompt never keeps a stale row."""
        parts = [self.role, self.angle, self.core, self.controls]
        if "set" not in self.controls and self.metadata.get("set") is not None:
            parts.append(str(self.metadata["set"]))  # a JSONL `set` field; a control `set` is already in controls
        payload = json.dumps(parts, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]
