"""What a feature stage is: a named, versioned, batched function of images (one output per image)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np


@dataclass
class StageInput:
    """One image as a feature stage sees it."""

    image: np.ndarray             # HxWx3 uint8 RGB
    prompt: Any                   # the prompt-language `Prompt` (vistar.prompts_dsl.model)
    controls: dict[str, Any]                # resolved control parameters (ground truth)
    deps: dict[str, Any] = field(default_factory=dict)  # outputs of the stages this one requires
    # the file the pixels were decoded from (None: an image from memory); a judge that must send the file as a
    # benchmark's own script does (`--upstream`) reads it, every other stage reads `image`
    source: Path | None = None


@dataclass
class StageContext:
    """Run-wide settings and the cache of loaded models shared by all batches."""

    device: str = "cpu"
    model_paths: dict[str, str] = field(default_factory=dict)
    features: dict[str, Any] = field(default_factory=dict)    # ontology `features:` section: per-stage parameters
    options: dict[str, Any] = field(default_factory=dict)     # run-time settings from the CLI (e.g. a judge endpoint)
    cache: dict[str, Any] = field(default_factory=dict)

    def params(self, stage: str) -> dict[str, Any]:
        return dict(self.features.get(stage) or {})

    def model(self, key: str, loader: Callable[[], Any]) -> Any:
        """Load once per run, reuse for every batch."""
        if key not in self.cache:
            self.cache[key] = loader()
        return self.cache[key]


@dataclass(frozen=True)
class FeatureStage:
    name: str
    version: str
    compute: Callable[[list[StageInput], StageContext], list[Any]]  # one output per input; an Exception marks a per-image failure
    requires: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    # raises ValueError for bad `features.<name>` values: run before any image, not as an error on every row
    check_params: Callable[[dict[str, Any]], Any] | None = None
