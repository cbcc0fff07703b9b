"""LI's parameters (`metrics.LI.params`), shared by the metric, the camera pitch and the light vocabulary."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LightAnchor:
    """A named light direction a prompt may ask for (`light="light from the upper left"`), in the camera frame."""

    phrase: str
    vector: tuple[float, float, float]
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class LIParams:
    """`metrics.LI.params` (values and meaning: vistar/data/ontology.yaml, docs/metrics/li.md)."""

    anchors: tuple[LightAnchor, ...]
    camera_pitch_deg: float
    camera_fov_deg: float
    frontal_cone_deg: float
    min_fit_iou: float
    min_confidence: float
    min_object_area_frac: float
    min_shadow_area_frac: float
    touch_frac: float
    use_horizon: bool = True
