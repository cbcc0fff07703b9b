"""Contracts every layer shares: feature stages, metrics and their results, judge protocols, feature value types.

This package imports no other vistar package (tests/test_import_graph.py checks it), so features, metrics,
the judge layer and the engine can all depend on it without depending on each other.
"""
from .metric import Combine, Metric, MetricResult
from .stage import FeatureStage, StageContext, StageInput
from .values import Instances, mask_box

__all__ = ["Combine", "FeatureStage", "Instances", "Metric", "MetricResult", "StageContext", "StageInput",
           "mask_box"]
