"""LI — lighting integrity: does the light direction implied by cast shadows match the requested one?

Salient objects (`instances`) are paired with the cast-shadow pixels (`shadows`) that touch them, read at the
camera pitch measured in the image (camera_pitch: the horizon, else the assumed pitch). The scene direction
is fitted jointly to all of them (light_fit: each candidate light predicts every object's shadow, scored by
its overlap with the detected ones), so merged shadows, shadows cut by a neighbour and shadows half hidden
behind their objects still count; each pair's own direction (light_geometry.pair_direction) is reported in
the details. LI = 1 − angle(estimate, expected)/(π/2), clipped to [0, 1]. No pair → `skipped` with the
reason, never a silent 0. Light from straight in front casts shadows hidden behind the objects, and a fit whose
predicted shadows barely match the detected ones explains too little: such an estimate is low-confidence and
skipped with the tentative direction in the details (docs/metrics/li.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import ndimage

from ..api import Instances, Metric, MetricResult, ShadowMap
from .camera_pitch import CameraPitch, estimate_pitch
from .li_params import LIParams
from .light_fit import fit_light
from .light_geometry import (
    PairGeometry,
    anchors_from_params,
    angle_between,
    li_score,
    pair_direction,
    parse_light,
    solid_model,
)


def salient_objects(instances: Instances, min_confidence: float, min_area_frac: float) -> list[int]:
    """Instances confident and large enough to cast a measurable shadow."""
    if len(instances) == 0:
        return []
    area = instances.masks.reshape(len(instances), -1).sum(1) / instances.masks[0].size
    return [i for i in range(len(instances)) if instances.confidences[i] >= min_confidence and area[i] >= min_area_frac]


def associate(instances: Instances, objects: list[int], shadow: np.ndarray,
              touch_frac: float) -> dict[int, tuple[np.ndarray, bool]]:
    """Object index -> (its cast-shadow pixels, contested): the shadow components that touch the object
    (within touch_frac of the image diagonal). A component touching several objects is split by nearest
    object and marked contested: merged shadows make that split, and so the tip, a guess."""
    if not objects or not shadow.any():
        return {}
    height, width = shadow.shape
    touch = max(2, int(round(touch_frac * math.hypot(height, width))))
    owner = np.zeros(shadow.shape, np.int32)              # 1-based index into `objects`, 0 = none
    for k, i in enumerate(objects, start=1):
        owner[instances.masks[i] & (owner == 0)] = k
    dist, (iy, ix) = ndimage.distance_transform_edt(owner == 0, return_indices=True)
    nearest = owner[iy, ix]
    components, _ = ndimage.label(shadow, structure=np.ones((3, 3)))
    near = (dist <= touch) & shadow & (nearest > 0)
    # every (component, object) that touch, in one pass, then one pass per object: a speckled shadow mask has
    # thousands of components, and passes over the image for each took seconds at 1024²
    span = len(objects) + 1
    touches = np.unique(components[near].astype(np.int64) * span + nearest[near])   # by component, then object
    comp_of, obj_of = touches // span, touches % span
    contested = np.bincount(comp_of)[comp_of] > 1
    pairs: dict[int, tuple[np.ndarray, bool]] = {}
    for k in dict.fromkeys(obj_of.tolist()):   # objects in the order their first component comes
        whole, split = comp_of[(obj_of == k) & ~contested], comp_of[(obj_of == k) & contested]
        mine = np.isin(components, whole) | (np.isin(components, split) & (nearest == k))
        pairs[objects[k - 1]] = (mine, bool(split.size))
    return pairs


def _truncated(shadow: np.ndarray, geometry: PairGeometry, margin: int = 2) -> bool:
    """The tip lies on the image border: the shadow may continue out of frame, so its length is unknown."""
    x, y = geometry.tip
    h, w = shadow.shape
    return x < margin or y < margin or x > w - margin or y > h - margin


# Pair quality tiers, best first, reported per pair (the joint fit reads every pair's shadow pixels).
_TIERS = ("clean", "shares a shadow with another object", "shadow leaves the frame")


@dataclass(frozen=True)
class LightReading:
    vector: np.ndarray | None     # scene light direction, None without a usable pair
    pairs: list[dict[str, Any]]             # per object-shadow pair: tier, shape, its own direction
    n_objects: int
    pitch: CameraPitch
    doubt: str | None             # why the direction is low confidence (scored as skipped), None when it is not
    fit: dict[str, Any] | None = None        # the joint fit's agreement (IoU) and the spread of near-best directions


def read_light(instances: Instances, shadow: np.ndarray, params: LIParams, image: np.ndarray | None = None) -> LightReading:
    """The scene light from every object-shadow pair, each read at its own local camera pitch. IMAGE (any
    resolution, e.g. the thumbnail) lets the pitch come from the horizon."""
    objects = salient_objects(instances, float(params.min_confidence), float(params.min_object_area_frac))
    pitch = estimate_pitch(image, [instances.masks[i] for i in objects], shadow.shape[0], params)
    pairs = associate(instances, objects, shadow, float(params.touch_frac))
    min_area = float(params.min_shadow_area_frac) * shadow.size
    rows, models, observed = [], [], np.zeros(shadow.shape, bool)
    for idx in objects:
        local = min(max(pitch.local(float(np.nonzero(instances.masks[idx])[0].max()) + 1.0), 1.0), 89.0)
        model = solid_model(instances.masks[idx], local)
        if model is not None:
            models.append(model)
        if idx not in pairs:
            continue
        pixels, contested = pairs[idx]
        observed |= pixels
        row = {"object": idx, "class": instances.class_names[idx], "shadow_pixels": int(pixels.sum())}
        geometry = pair_direction(model, pixels)
        if pixels.sum() < min_area or geometry is None:
            row["tier"] = "shadow too small"
        else:
            row["tier"] = _TIERS[2] if _truncated(shadow, geometry) else _TIERS[1] if contested else _TIERS[0]
            row.update(_describe(geometry.vector), tip=[round(v, 1) for v in geometry.tip], shape=geometry.shape,
                       local_pitch_deg=round(local, 1))
        rows.append(row)
    hidden = np.asarray(instances.masks[objects].any(0), bool)      # ground behind the objects is never seen
    fit = fit_light(models, observed, hidden) if any("vector" in r for r in rows) else None
    if fit is None:
        return LightReading(None, rows, len(objects), pitch, None)
    record = {"iou": round(fit.iou, 3), "near_best_spread_deg": round(fit.runner_up_deg, 1)}
    return LightReading(fit.vector, rows, len(objects), pitch, _doubt(fit.vector, fit.iou, params), record)


def _doubt(vector: np.ndarray, iou: float, params: LIParams) -> str | None:
    """Why a fitted direction is not to be trusted: light from the front hides the shadows behind their objects;
    predicted shadows that barely overlap the detected ones explain too little of them (docs/metrics/li.md)."""
    if math.degrees(math.atan2(abs(vector[0]), vector[2])) < float(params.frontal_cone_deg):
        return (f"the shadows run away from the camera (light within {params.frontal_cone_deg}° of the front), "
                "hidden behind their objects")
    if iou < float(params.min_fit_iou):
        return (f"the best light's predicted shadows agree with the detected ones at IoU {iou:.3f}, below "
                f"min_fit_iou {params.min_fit_iou}")
    return None


def estimate_light(instances: Instances, shadow: np.ndarray, params: LIParams,
                   image: np.ndarray | None = None) -> tuple[np.ndarray | None, list[dict[str, Any]], int]:
    """(scene light vector or None, per-pair details, number of salient objects): read_light without the
    pitch and confidence records, for callers that only compare directions."""
    reading = read_light(instances, shadow, params, image)
    return reading.vector, reading.pairs, reading.n_objects


def _describe(v: np.ndarray) -> dict[str, Any]:
    return {"vector": [round(float(c), 4) for c in v],
            "azimuth_deg": round(math.degrees(math.atan2(v[0], v[2])), 1),
            "elevation_deg": round(math.degrees(math.asin(max(-1.0, min(1.0, float(v[1]))))), 1)}


def _li(features: dict[str, Any], controls: dict[str, Any], params: LIParams, prompt: Any) -> MetricResult:
    if "light" not in controls:
        return MetricResult.error("no expected light direction: give light=\"...\" or an anchor phrase in the core")
    anchors = anchors_from_params(params.anchors)
    try:
        expected, label = parse_light(controls["light"], anchors)
    except ValueError as exc:
        return MetricResult.error(str(exc))
    shadows: ShadowMap = features["shadows"]
    reading = read_light(features["instances"], shadows.mask, params, features.get("thumbnail"))
    info = {"expected": label, "expected_vector": [round(float(c), 4) for c in expected], "n_objects": reading.n_objects,
            "pairs": reading.pairs, "shadow_source": shadows.source, "camera": reading.pitch.record(), "fit": reading.fit}
    if reading.vector is None:
        reason = "no salient object" if reading.n_objects == 0 else "no object-shadow pair found"
        return MetricResult.skipped(reason, **info)
    estimate = _describe(reading.vector)
    if reading.doubt is not None:
        return MetricResult.skipped(f"low confidence: {reading.doubt}", **info, tentative_estimate=estimate)
    angle = angle_between(reading.vector, expected)
    return MetricResult.ok(li_score(reading.vector, expected), **info, estimate=estimate,
                           angle_deg=round(math.degrees(angle), 2), n_pairs=sum("vector" in p for p in reading.pairs))


METRIC = Metric(name="LI", angle="LI", version="5", features=("instances", "shadows"), fn=_li, optional=("thumbnail",),
                params=LIParams)
