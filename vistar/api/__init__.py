"""Contracts every layer shares: feature stages, metrics and their results, judge protocols, feature value types.

This package imports no other vistar package (tests/test_import_graph.py checks it), so features, metrics,
the judge layer and the engine can all depend on it without depending on each other. Every value a metric
reads from a feature stage is declared here, so a metric is tested with hand-made values and never imports
the stage that computes them.
"""
from .metric import Combine, Metric, MetricResult
from .ocr import OcrLine, OcrResult, text_corners
from .params import ParamsError, parse
from .people import Face, FaceResult, PersonBox, PosePerson, PoseResult
from .stage import DEFAULT_SEED, FeatureStage, ModelScale, RunOptions, StageContext, StageInput
from .storyboard import ClipEmbeddings, PanelLayout, SubjectEmbeddings, SubjectMasks
from .values import Instances, PadimResult, ShadowMap, mask_box

__all__ = ["DEFAULT_SEED", "ClipEmbeddings", "Combine", "Face", "FaceResult", "FeatureStage", "Instances", "Metric",
           "MetricResult", "ModelScale", "OcrLine", "OcrResult", "PadimResult", "PanelLayout", "ParamsError", "PersonBox", "PosePerson",
           "PoseResult", "RunOptions", "ShadowMap", "StageContext", "StageInput", "SubjectEmbeddings", "SubjectMasks",
           "mask_box", "parse", "text_corners"]
