"""Each metric's and stage's ontology block as its typed parameters, checked when a run is planned.

`check_params` parses every registered metric's `metrics.<name>.params` and every registered stage's
`features.<name>` block before anything is written: an unknown key or a wrong type stops the run naming the key
and the file that set it (`OntologyError`, exit 2 on the command line), instead of failing every row.
"""
from __future__ import annotations

from typing import Any

from ..api import FeatureStage, Metric, ParamsError, parse
from ..ontology import Ontology, OntologyError
from . import registry


def metric_params(ontology: Ontology, metric: Metric | str) -> Any:
    """The metric's `metrics.<name>.params` parsed into its parameter dataclass (None when it declares none)."""
    metric = registry.metric(metric) if isinstance(metric, str) else metric
    if metric.params is None:
        return None
    return _parsed(ontology, metric.params, ontology.metric_params(metric.name), f"metrics.{metric.name}.params")


def stage_params(ontology: Ontology, stage: FeatureStage) -> Any:
    """The stage's `features.<name>` block parsed into its parameter dataclass (None when it declares none)."""
    if stage.params is None:
        return None
    return _parsed(ontology, stage.params, (ontology.data.get("features") or {}).get(stage.name), f"features.{stage.name}")


def _parsed(ontology: Ontology, kind: type[Any], block: Any, where: str) -> Any:
    try:
        return parse(kind, block, where)
    except ParamsError as exc:
        raise OntologyError(f"{ontology.source_of(exc.key)}: {exc}") from None


def check_params(ontology: Ontology) -> None:
    """Parse the blocks of every metric and stage the registry knows (a module that cannot be imported is left to
    the run, which records its rows as unavailable); raises OntologyError naming the file and the key."""
    for name in registry.metric_names():   # a protocol that does not import lists no metric
        try:
            metric = registry.metric(name)
        except Exception:  # noqa: BLE001 - a missing optional dependency: the run records the metric as unavailable
            continue
        metric_params(ontology, metric)
    for name in registry.FEATURES:
        try:
            stage = registry.feature_stage(name)
        except Exception:  # noqa: BLE001 - as above, for its stage
            continue
        stage_params(ontology, stage)
