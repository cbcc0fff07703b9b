"""Contract over everything registered (the import list and each protocol's declaration): every stage and metric
is what its entry says, its dependencies are registered and acyclic, each metric reaches prompts through its
declared angle, and each metric's rows show up in a report table (its angle's scores, or the other metrics')."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from vistar.api import FeatureStage, Metric
from vistar.engine import registry
from vistar.ontology import Ontology
from vistar.report.tables import build_report_data

STAGES = list(registry.FEATURES) + [f"judge.{p}" for p in registry.PROTOCOLS]


@pytest.mark.parametrize("name", STAGES)
def test_stage_declaration(name):
    stage = registry.feature_stage(name)
    assert isinstance(stage, FeatureStage) and stage.name == name
    assert isinstance(stage.version, str) and stage.version
    assert all(dep in STAGES for dep in stage.requires)
    assert registry.stage_order({name})[-1] == name          # dependencies first, no cycle
    assert all(isinstance(m, str) and m for m in stage.models)


@pytest.mark.parametrize("name", registry.metric_names())
def test_metric_declaration_and_routing(name):
    metric = registry.metric(name)
    assert isinstance(metric, Metric) and metric.name == name and isinstance(metric.version, str) and metric.version
    assert metric.features and set(registry.stage_order(set(metric.all_features))) >= set(metric.all_features)
    assert name in registry.metrics_for_angle(metric.angle)
    assert callable(metric.fn)
    if metric.combine is not None:   # what calibration varies must be the metric's own ontology parameters
        assert set(metric.combine.params) <= set(Ontology.load().metric_params(name)) and metric.combine.subscores


def test_every_metric_appears_in_the_report():
    names = registry.metric_names()
    rows = [{"image": f"m/{i}.png", "image_sha256": str(i), "model": "m", "prompt_id": str(i), "sample": 0, "role": "GD",
             "angle": registry.metric(n).angle, "metric": n, "score": 0.5, "status": "ok", "error": None,
             "details": json.dumps({}), "set": None, "metric_version": "1", "key": str(i), "shard": 0}
            for i, n in enumerate(names)]
    data = build_report_data(pd.DataFrame(rows), Ontology.load(), resamples=10)
    in_tables = set(data.angle_scores.angle)
    others = set(data.other_metrics.metric)
    for name in names:
        angle = registry.metric(name).angle
        assert (name == angle and angle in in_tables) or name in others, name
