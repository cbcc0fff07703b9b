"""Registries of feature stages and metrics, resolved lazily by import path (heavy deps load only when used).

A feature stage is batched and runs once per image; a metric is a pure function of the features it
declares plus the prompt's (resolved) control parameters and its ontology parameters.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..prompts_dsl.model import Prompt


@dataclass
class StageInput:
    """One image as a feature stage sees it."""

    image: np.ndarray             # HxWx3 uint8 RGB
    prompt: Prompt
    controls: dict                # resolved control parameters (ground truth)
    deps: dict[str, Any] = field(default_factory=dict)  # outputs of the stages this one requires


@dataclass
class StageContext:
    """Run-wide settings and the cache of loaded models shared by all batches."""

    device: str = "cpu"
    model_paths: dict[str, str] = field(default_factory=dict)
    features: dict = field(default_factory=dict)    # ontology `features:` section: per-stage parameters
    options: dict = field(default_factory=dict)     # run-time settings from the CLI (e.g. a judge endpoint)
    cache: dict = field(default_factory=dict)

    def params(self, stage: str) -> dict:
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
    compute: Callable[[list[StageInput], StageContext], list]  # one output per input; an Exception marks a per-image failure
    requires: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    # raises ValueError for bad `features.<name>` values: run before any image, not as an error on every row
    check_params: Callable[[dict], Any] | None = None


@dataclass
class MetricResult:
    score: float | None
    status: str = "ok"            # ok | error | skipped
    error: str | None = None
    details: dict = field(default_factory=dict)

    @classmethod
    def ok(cls, score: float, **details) -> "MetricResult":
        """Clamped to [0, 1]; a NaN/inf score becomes an error (a clamp would turn NaN into a silent 0)."""
        score = float(score)
        if not math.isfinite(score):
            return cls(None, "error", f"metric produced a non-finite score ({score})", details)
        return cls(min(1.0, max(0.0, score)), "ok", None, details)

    @classmethod
    def skipped(cls, reason: str, **details) -> "MetricResult":
        return cls(None, "skipped", reason, details)


@dataclass(frozen=True)
class Metric:
    name: str
    angle: str
    version: str
    features: tuple[str, ...]
    fn: Callable[[dict, dict, dict, Prompt], MetricResult]  # (features, controls, params, prompt) -> result
    # Features used when they can be computed; a missing weight or failure there leaves them out of the
    # dict the metric receives instead of skipping it (e.g. CPA counts people from `instances` when YOLO exists).
    optional: tuple[str, ...] = ()

    @property
    def all_features(self) -> tuple[str, ...]:
        return self.features + self.optional

    def inputs(self, feats: dict) -> dict:
        """What the metric function receives: its required features and the optional ones that succeeded."""
        given = {n: feats[n] for n in self.features}
        given.update({n: feats[n] for n in self.optional if n in feats and not isinstance(feats[n], BaseException)})
        return given


# name -> "module:attribute"; add a line here when you add a stage or a metric.
FEATURES: dict[str, str] = {
    "ocr": "vistar.features.ocr:STAGE",
    "panels": "vistar.features.panels:STAGE",
    "clip_embed": "vistar.features.clip_embed:STAGE",
    "subject_masks": "vistar.features.subject_masks:STAGE",
    "dino_embed": "vistar.features.dino_embed:STAGE",
    "depth": "vistar.features.depth:STAGE",
    "instances": "vistar.features.instances:STAGE",
    "padim": "vistar.features.padim:STAGE",
    "thumbnail": "vistar.features.thumbnail:STAGE",
    "shadows": "vistar.features.shadows:STAGE",
    "faces": "vistar.features.faces:STAGE",
    "pose": "vistar.features.pose:STAGE",
    "hwpq": "vistar.vlm.hwpq.stage:STAGE",
    "judge.wise-legacy": "vistar.vlm.protocols.stage:WISE_LEGACY",
    "judge.wise-verified": "vistar.vlm.protocols.stage:WISE_VERIFIED",
    "judge.genexam": "vistar.vlm.protocols.stage:GENEXAM",
    "judge.unieval": "vistar.vlm.protocols.stage:UNIEVAL",
    "judge.phybench": "vistar.vlm.protocols.stage:PHYBENCH",
}
METRICS: dict[str, str] = {
    "TR": "vistar.metrics.tr:METRIC",
    "CSE": "vistar.metrics.cse:METRIC",
    "PSC": "vistar.metrics.psc:METRIC",
    "GC": "vistar.metrics.gc:METRIC",
    "LI": "vistar.metrics.li:METRIC",
    "CPA": "vistar.metrics.cpa:METRIC",
    "SF": "vistar.vlm.hwpq.metric:SF",
    "CUL": "vistar.vlm.hwpq.metric:CUL",
    "MA": "vistar.vlm.hwpq.metric:MA",
    "wiscore.legacy": "vistar.vlm.protocols.metrics:WISCORE_LEGACY",
    "wiscore.verified": "vistar.vlm.protocols.metrics:WISCORE_VERIFIED",
    "genexam.strict": "vistar.vlm.protocols.metrics:GENEXAM_STRICT",
    "genexam.relaxed": "vistar.vlm.protocols.metrics:GENEXAM_RELAXED",
    "uniscore": "vistar.vlm.protocols.metrics:UNISCORE",
    "phybench.phy": "vistar.vlm.protocols.metrics:PHYBENCH_PHY",
    "phybench.scene": "vistar.vlm.protocols.metrics:PHYBENCH_SCENE",
}


def _resolve(table: dict[str, str], name: str, kind: str):
    if name not in table:
        raise KeyError(f"unknown {kind} '{name}' (known: {', '.join(sorted(table))})")
    module, attr = table[name].split(":")
    return getattr(importlib.import_module(module), attr)


def feature_stage(name: str) -> FeatureStage:
    return _resolve(FEATURES, name, "feature stage")


def metric(name: str) -> Metric:
    return _resolve(METRICS, name, "metric")


def metrics_for_angle(angle: str) -> list[str]:
    """Metric names that score an angle (by convention the angle metric is named after the angle)."""
    return [name for name in METRICS if name.split(".")[0] == angle]


def metrics_for_prompt(prompt: Prompt) -> list[str]:
    """A prompt naming a sibling-benchmark protocol (control `protocol=`) is scored by that protocol's metrics."""
    from ..vlm.protocols import PROTOCOLS  # light: pure-Python protocol definitions

    proto = PROTOCOLS.get(str(prompt.controls.get("protocol")))
    return list(proto.metrics) if proto else metrics_for_angle(prompt.angle)


def stage_order(names: set[str]) -> list[str]:
    """Stages needed for `names`, dependencies first, in a fixed (sorted) order."""
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in order:
            return
        if name in path:
            raise ValueError(f"feature stage cycle: {' -> '.join(path + (name,))}")
        for dep in feature_stage(name).requires:
            visit(dep, path + (name,))
        order.append(name)

    for name in sorted(names):
        visit(name, ())
    return order
