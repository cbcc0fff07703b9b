"""Registries of feature stages and metrics, resolved lazily by import path (heavy deps load only when used).

A feature stage is batched and runs once per image; a metric is a pure function of the features it
declares plus the prompt's (resolved) control parameters and its ontology parameters.
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING, Any

from ..api import FeatureStage, Metric
from ..models.errors import install_hint

if TYPE_CHECKING:   # a prompt is only read here
    from ..prompts_dsl import Prompt

__all__ = ["FEATURES", "METRICS", "PROTOCOLS", "check", "feature_stage", "metric", "metric_names", "metrics_for_angle",
           "metrics_for_prompt", "stage_order"]

# The one import list (docs/engine.md, "Adding a metric / a stage / a protocol"): name -> "module:attribute".
# Modules load when first used, so heavy dependencies load only for the stages a run needs.
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
}
# Judge protocols: each declaration brings its stage `judge.<name>` and its metrics (angle = the protocol's name,
# so a `protocol=<name>` control routes a prompt to them); they are not listed in the two tables above.
PROTOCOLS: dict[str, str] = {
    "wise-legacy": "vistar.vlm.protocols.wise_legacy:PROTOCOL",
    "wise-verified": "vistar.vlm.protocols.wise_verified:PROTOCOL",
    "genexam": "vistar.vlm.protocols.genexam:PROTOCOL",
    "unieval": "vistar.vlm.protocols.unieval:PROTOCOL",
    "phybench": "vistar.vlm.protocols.phybench:PROTOCOL",
}
# What builds a declaration's stage and metrics (the judge layer's generic parts, which the declarations
# themselves do not import): (declaration) -> FeatureStage, and (declaration) -> {metric name: Metric}.
PROTOCOL_PARTS: dict[str, str] = {
    "stage": "vistar.vlm.protocols.stage:make_stage",
    "metrics": "vistar.vlm.protocols.metrics:metrics_of",
}


class ModuleUnavailable(ImportError):
    """A registered module that does not import on this machine: the message names it, what it lacked and how to
    install that, so the `skipped` rows of its metric say what to do (docs/engine.md)."""

    def __init__(self, module: str, exc: ImportError):
        super().__init__(f"module {module} cannot be imported: {type(exc).__name__}: {exc}{install_hint(exc)}",
                         name=exc.name)


def _resolve(table: dict[str, str], name: str, kind: str) -> Any:
    if name not in table:
        raise KeyError(f"unknown {kind} '{name}' (known: {', '.join(sorted(table))})")
    module, attr = table[name].split(":")
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        raise ModuleUnavailable(module, exc) from exc
    return getattr(imported, attr)


def protocol(name: str) -> Any:
    """A judge protocol's declaration (vistar.vlm.protocols.base.Protocol)."""
    return _resolve(PROTOCOLS, name, "protocol")


def _protocol_part(part: str, name: str) -> Any:
    """Protocol NAME's stage or metrics, built from its declaration."""
    return _resolve(PROTOCOL_PARTS, part, "protocol part")(protocol(name))


def _protocol_metrics_of(name: str) -> dict[str, Metric] | None:
    """Protocol NAME's metrics, or None when its module does not import on this machine."""
    try:
        built: dict[str, Metric] = _protocol_part("metrics", name)
    except Exception:  # noqa: BLE001 - the engine records its prompts' rows as unavailable (`metric`)
        return None
    return built


def _protocol_metrics() -> dict[str, Metric]:
    """The metrics of every protocol that imports here: one that does not costs only its own prompts' rows."""
    return {m: obj for name in PROTOCOLS for m, obj in (_protocol_metrics_of(name) or {}).items()}


def feature_stage(name: str) -> FeatureStage:
    if name not in FEATURES and name.startswith("judge.") and name[len("judge."):] in PROTOCOLS:
        stage: FeatureStage = _protocol_part("stage", name[len("judge."):])
        return stage
    resolved: FeatureStage = _resolve(FEATURES, name, "feature stage")
    return resolved


def metric(name: str) -> Metric:
    """Metric NAME; for a protocol whose module does not import here (which `check` routes its prompts to under
    the protocol's own name), the error importing it."""
    if name not in METRICS:
        found = _protocol_metrics().get(name)
        if found is not None:
            return found
        if name in PROTOCOLS:   # a protocol that does not import here: raise why
            _protocol_part("metrics", name)
    resolved: Metric = _resolve(METRICS, name, "metric")
    return resolved


def metric_names() -> list[str]:
    """Every registered metric: the table's, then each protocol's."""
    return list(METRICS) + [m for m in _protocol_metrics() if m not in METRICS]


def _ontology_angles() -> set[str]:
    from ..ontology import Ontology

    return set(Ontology.load().angles)


_CHECKED: dict[tuple[tuple[tuple[str, str], ...], ...], dict[str, list[str]]] = {}


def check() -> dict[str, list[str]]:
    """Build the routing table (angle -> metric names) from the declarations and refuse what cannot run:
    a metric registered under another name than it declares, a metric whose angle is neither an ontology
    angle nor a protocol, a metric needing an unregistered stage, a metric name both listed and declared by a
    protocol. (A protocol cannot be half-registered: its declaration brings its stage and metrics, and one
    missing a part fails at import.) Raises ValueError naming each problem; checked once per table content."""
    ident = (tuple(FEATURES.items()), tuple(METRICS.items()), tuple(PROTOCOLS.items()))
    if ident in _CHECKED:
        return _CHECKED[ident]
    problems: list[str] = []
    routes: dict[str, list[str]] = {}
    known = _ontology_angles() | set(PROTOCOLS)
    loaded = {}
    for name, where in METRICS.items():
        try:
            loaded[name] = m = metric(name)
        except Exception:  # noqa: BLE001 - its module cannot load: the engine records the metric as unavailable
            routes.setdefault(name.split(".")[0], []).append(name)   # on the rows of the angle its name says
            continue
        if m.name != name:
            problems.append(f"metric registered as '{name}' ({where}) declares name '{m.name}'")
        if m.angle not in known:
            problems.append(f"metric '{name}' ({where}) declares angle '{m.angle}', which is neither an ontology "
                            f"angle nor a protocol, so no prompt would reach it")
        missing = [f for f in m.all_features if f not in FEATURES and f.removeprefix("judge.") not in PROTOCOLS]
        if missing:
            problems.append(f"metric '{name}' ({where}) needs unregistered feature stage(s): {', '.join(missing)}")
        if m.combine is not None and not set(m.combine.params) <= _field_names(m.params):
            problems.append(f"metric '{name}' ({where}) combines parameters its parameter dataclass does not declare: "
                            f"{', '.join(sorted(set(m.combine.params) - _field_names(m.params)))}")
        routes.setdefault(m.angle, []).append(name)
    clash = sorted(set(METRICS) & set(_protocol_metrics()))
    if clash:
        problems.append(f"metric(s) {', '.join(clash)} registered in METRICS and declared by a protocol")
    for proto in PROTOCOLS:
        built = _protocol_metrics_of(proto)
        if built is None:   # it does not import here: its prompts get one row named like it, unavailable (`metric`)
            routes.setdefault(proto, []).append(proto)
        for name, m in (built or {}).items():
            routes.setdefault(m.angle, []).append(name)
    if problems:
        raise ValueError("metric registry: " + "; ".join(problems))
    _CHECKED[ident] = routes
    return routes


def _field_names(kind: type | None) -> set[str]:
    return {f.name for f in dataclasses.fields(kind)} if kind is not None and dataclasses.is_dataclass(kind) else set()


def metrics_for_angle(angle: str) -> list[str]:
    """Metric names that score an angle: every registered metric declaring it (`Metric.angle`)."""
    return list(check().get(angle, []))


def metrics_for_prompt(prompt: Prompt) -> list[str]:
    """A prompt naming a sibling-benchmark protocol (control `protocol=`) is scored by that protocol's metrics."""
    name = str(prompt.controls.get("protocol"))
    return metrics_for_angle(name) if name in PROTOCOLS else metrics_for_angle(prompt.angle)


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
