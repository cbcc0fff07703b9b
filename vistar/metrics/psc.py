"""PSC — physical-spatial consistency: do touching objects meet the way solid objects can?

For each pair of instances whose masks overlap or touch, the chaos metric (docs/metrics/psc.md)

    C = |d̄_inter(A) − d̄_inter(B)| / (|d̄_non(A) − d̄_non(B)| + ε)

compares the depth step across the contact band with the step between the objects' bodies. Occlusion or
resting contact leaves a step at the contact (C large); interpenetration makes the surfaces meet there
(C ≈ 0). Each pair's consistency s = C / (C + c_ref) (c_ref relaxed for attached pairs: enclosed and flush
with the surface around them; and for a front object standing on something rather than hanging on the face
behind it, whose top edge may meet that face in resting contact) is raised, for a solid sitting on
a face seen from above (the contact in view), to what a ball's or a cube's depth against that face's plane says
of how deep it is sunk (psc_rest, psc_cube); it is
weighted by the product of the two confidences: pair = 1 − w·(1 − s). PSC = the minimum pair score; no interacting pair → 1.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..api import Instances, Metric, MetricResult
from ..kernels.chaos import pair_stats
from .psc_cube import cube_sink
from .psc_params import PSCParams
from .psc_rest import rim_height, seat, sink_depth
from .psc_support import support_below


def candidate_pairs(boxes: np.ndarray, reach: float) -> np.ndarray:
    """Pairs (i < j) whose boxes, grown by REACH pixels, intersect: a cheap filter before the pixel kernel."""
    pairs = [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
             if boxes[i, 0] - reach <= boxes[j, 2] and boxes[j, 0] - reach <= boxes[i, 2]
             and boxes[i, 1] - reach <= boxes[j, 3] and boxes[j, 1] - reach <= boxes[i, 3]]
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


def enclosure(small: np.ndarray, large: np.ndarray) -> float:
    """Fraction of the smaller box's area inside the larger box."""
    iw = max(0.0, min(small[2], large[2]) - max(small[0], large[0]))
    ih = max(0.0, min(small[3], large[3]) - max(small[1], large[1]))
    area = max(1e-9, (small[2] - small[0]) * (small[3] - small[1]))
    return float(iw * ih / area)


def depth_scale(depth: np.ndarray) -> float:
    """Robust depth range (2nd–98th percentile) of the image: the unit ε is measured in."""
    finite = depth[np.isfinite(depth)]
    if finite.size == 0:
        return 0.0
    lo, hi = np.percentile(finite, [2, 98])
    return float(hi - lo)


def chaos_from_stats(stats: np.ndarray, eps: float) -> np.ndarray:
    """C for each row of `kernels.chaos` statistics (rows must have non-empty sets)."""
    inter_a, inter_b = stats[:, 0] / stats[:, 1], stats[:, 2] / stats[:, 3]
    non_a, non_b = stats[:, 4] / stats[:, 5], stats[:, 6] / stats[:, 7]
    return np.asarray(np.abs(inter_a - inter_b) / (np.abs(non_a - non_b) + eps), float)


def contact_radii(height: int, width: int, params: PSCParams) -> tuple[int, int]:
    """(touch, band) in pixels from their fractions of the image diagonal (segmentation errors scale with it)."""
    diagonal = float(np.hypot(height, width))
    return max(1, math.ceil(params.touch_frac * diagonal)), max(1, round(params.band_frac * diagonal))


def score_pairs(instances: Instances, depth: np.ndarray, params: PSCParams) -> list[dict[str, Any]]:
    """Every interacting pair with its chaos value, attachment flag, support, sink or rim reading, weight and pair
    score (fixed order)."""
    height, width = depth.shape
    if instances.masks.shape[1:] != (height, width):
        raise ValueError(f"instance masks {instances.masks.shape[1:]} and depth {depth.shape} differ in size")
    keep = [k for k in range(len(instances))
            if instances.confidences[k] >= params.min_confidence
            and instances.masks[k].sum() >= params.min_area_frac * height * width]
    if len(keep) < 2:
        return []
    finite = np.isfinite(depth)
    masks, boxes = instances.masks[keep] & finite, np.asarray(instances.boxes, float)[keep]  # no depth, no vote
    conf = np.asarray(instances.confidences, float)[keep]
    touch, band = contact_radii(height, width, params)
    pairs = candidate_pairs(boxes, touch + 1)
    if len(pairs) == 0:
        return []
    scale = depth_scale(depth)   # of the finite pixels: the filled ones below take no part in it
    raw, depth = depth, np.where(finite, depth, 0.0).astype(np.float64)
    stats = pair_stats(masks, depth, pairs, touch, band, backend=params.kernel)
    eps = params.eps_frac * scale + 1e-12
    out = []
    min_px = int(params.min_region_px)
    for (i, j), row in zip(pairs, stats):
        if row[8] == 0:
            continue  # boxes near, masks not touching
        pair = {"a": int(keep[i]), "b": int(keep[j]), "a_class": instances.class_names[keep[i]],
                "b_class": instances.class_names[keep[j]], "contact_px": int(row[8])}
        if min(row[1], row[3]) < min_px:
            out.append({**pair, "status": "undetermined"})  # too little of one object at the contact
            continue
        row = _body_fallback(row, min_px)
        chaos = float(chaos_from_stats(row[None], eps)[0])
        small, large = (i, j) if _area(boxes[i]) <= _area(boxes[j]) else (j, i)
        attached = (enclosure(boxes[small], boxes[large]) >= params.attach_enclosure
                    and _flush(row, small_is_a=small == i, tolerance=params.flush_frac * scale))
        front, back = (i, j) if row[0] / row[1] >= row[2] / row[3] else (j, i)   # nearer at the contact
        support = support_below(masks[front], masks[back], raw, touch + 2, params.step_frac * scale)
        sink, resting, rim = _on_top(masks[i], masks[j], depth, touch, scale, params)
        c_ref = params.c_ref * (params.attach_relax if attached else 1.0)
        c_ref *= 1.0 - (1.0 - params.support_relax) * support
        consistency = chaos / (chaos + c_ref)
        if resting is not None:   # a ball or cube on a top face, contact in view: how deep it reads as sunk
            consistency = max(consistency, resting)
        if rim is not None:    # another solid there: how high its lower rim stands above the face
            consistency = max(consistency, _ramp(rim - params.rim_low_frac, params.rim_high_frac - params.rim_low_frac))
        weight = float(conf[i] * conf[j])
        out.append({**pair, "status": "scored", "chaos": round(chaos, 6), "attached": attached,
                    "support": round(support, 6),
                    "sink": None if sink is None else round(sink, 6), "rim": None if rim is None else round(rim, 6),
                    "weight": round(weight, 6), "score": 1.0 - weight * (1.0 - consistency)})
    return out


def _on_top(mask_a: np.ndarray, mask_b: np.ndarray, depth: np.ndarray, margin: int, scale: float,
            params: PSCParams) -> tuple[float | None, float | None, float | None]:
    """(sink, the consistency it gives, rim) of whichever object sits on the other's face seen from above
    (psc_rest): a ball's sink depth in radii (`sink_low`/`sink_high`) or a cube's in half-sides (psc_cube,
    `cube_sink_low`/`cube_sink_high`: its reading scatters otherwise), the one more resting if both objects sit;
    any other solid's rim height in units of the depth range SCALE (the higher); None where no such object sits."""
    readings, rims = [], []
    for solid, face in ((mask_a, mask_b), (mask_b, mask_a)):
        fitted = seat(solid, face, depth, margin)   # the fits the three readings share, once
        if fitted is None:
            continue
        sink = sink_depth(solid, face, depth, margin, params.top_tol_frac * scale, fitted)
        low, high = params.sink_low, params.sink_high
        if sink is None:
            sink = cube_sink(solid, depth, fitted)
            low, high = params.cube_sink_low, params.cube_sink_high
        height = rim_height(solid, face, depth, margin, fitted) if sink is None else None
        readings += [] if sink is None else [(_ramp(high - sink, high - low), sink)]
        rims += [] if height is None else [height / scale]
    resting, sink = max(readings, key=lambda r: (r[0], -r[1])) if readings else (None, None)   # ties: the shallower
    return sink, resting, (max(rims) if rims else None)


def _ramp(value: float, width: float) -> float:
    """VALUE / WIDTH clipped to [0, 1]."""
    return min(1.0, max(0.0, value / width))


def _flush(row: np.ndarray, small_is_a: bool, tolerance: float) -> bool:
    """The enclosed object's body lies within TOLERANCE of the surrounding surface at their contact (a logo, a
    pocket): continuity there is expected. A body that stands out of the surface while its rim meets it
    with no depth step (a ball sunk into a block's face) is a penetration, not an attachment."""
    body_small = row[4] / row[5] if small_is_a else row[6] / row[7]
    contact_large = row[2] / row[3] if small_is_a else row[0] / row[1]
    return bool(abs(body_small - contact_large) <= tolerance)


def _body_fallback(row: np.ndarray, min_px: int) -> np.ndarray:
    """An object lying almost wholly inside the band has no body of its own: use its whole visible mask."""
    row = row.copy()
    for inter, non in ((0, 4), (2, 6)):
        if row[non + 1] < min_px:
            row[non], row[non + 1] = row[non] + row[inter], row[non + 1] + row[inter + 1]
    return row


def _area(box: np.ndarray) -> float:
    return float((box[2] - box[0]) * (box[3] - box[1]))


def _psc(features: dict[str, Any], controls: dict[str, Any], params: PSCParams, prompt: Any) -> MetricResult:
    depth = np.asarray(features["depth"])
    if depth_scale(depth) <= 0:
        return MetricResult.skipped("depth map is flat or empty: contacts cannot be judged")
    pairs = score_pairs(features["instances"], depth, params)
    scored = [p for p in pairs if p["status"] == "scored"]
    if not scored:
        return MetricResult.ok(1.0, n_pairs=0, pairs=pairs, reason="no interacting pair")
    worst = min(scored, key=lambda p: p["score"])
    score = worst["score"]
    for p in scored:
        p["score"] = round(p["score"], 6)
    return MetricResult.ok(score, n_pairs=len(scored), worst=worst, pairs=pairs)


METRIC = Metric(name="PSC", angle="PSC", version="11", features=("instances", "depth"), fn=_psc, params=PSCParams)
