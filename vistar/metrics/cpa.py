"""CPA — character portrayal accuracy: right number of people, in the right postures, with the right
expressions.

People come from `instances` (class `person`) when that feature is given, else from the pose stage's person
detector fused with the face detections, plus any face no person claims (docs/metrics/cpa.md). Detected people are matched to the prompt's people by the Hungarian
algorithm on posture + expression agreement; S_count, S_posture, S_expression are combined as a weighted
mean over the terms the prompt asks for, with per-role weights from the ontology.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..api import Face, FaceResult, Instances, Metric, MetricResult, PoseResult
from ..features.persons import head_cost, iou
from .cpa_combine import COMBINE, combine_one, weights as role_weights
from .cpa_params import CPAParams
from .posture import Posture, classify, parse_posture, posture_similarity

_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}

Box = tuple[float, float, float, float]   # x0, y0, x1, y1 in pixels


@dataclass(frozen=True)
class Person:
    box: Box
    posture: Posture | None
    face: Face | None


def _inside(point: tuple[float, float], box: Box) -> bool:
    return bool(box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3])


def _centre(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _pose_cost(pose_box: Box, person_box: Box) -> float:
    """1 − IoU of a pose's box with a person box; inf when the pose's centre lies outside it."""
    return 1.0 - iou(pose_box, person_box) if _inside(_centre(pose_box), person_box) else float("inf")


def _one_to_one(boxes: list[Box], others: list[Box], cost: Callable[[Box, Box], float]) -> dict[int, int]:
    """{index into BOXES: index into OTHERS}, one to one at the least total COST(other, box) (Hungarian); an
    infinite cost never pairs. One to one and not in turn: of two overlapping people the first would take a pose or
    face that is the second's, who would then go without."""
    costs = np.array([[cost(other, box) for other in others] for box in boxes], float).reshape(len(boxes), len(others))
    if costs.size == 0:
        return {}
    rows, cols = linear_sum_assignment(np.where(np.isfinite(costs), costs, 1e6))
    return {int(r): int(c) for r, c in zip(rows, cols) if np.isfinite(costs[r, c])}


def people_from(features: dict[str, Any], params: CPAParams) -> tuple[list[Person], str]:
    """Detected people and where they came from: `instances` (YOLO), else `persons+faces` (the pose stage's
    person detector fused with the faces), else `pose+faces` (no person detector weights). A face that no
    person claims is a person too: a detector misses people whose body is hidden, a face model people turned away."""
    min_vis = float(params.min_visibility)
    poses: PoseResult = features["pose"]
    faces: FaceResult = features["faces"]
    instances = features.get("instances")
    if isinstance(instances, Instances):
        keep = [i for i, name in enumerate(instances.class_names)
                if name == params.person_class and instances.confidences[i] >= float(params.min_person_confidence)]
        boxes: list[Box] = [tuple(float(v) for v in instances.boxes[i]) for i in keep]  # type: ignore[misc]
        posed = [(p.box(min_vis), p.landmarks) for p in poses.people if p.landmarks is not None]
        pose_of = _one_to_one(boxes, [box for box, _ in posed], _pose_cost)
        face_of = _one_to_one(boxes, [f.box for f in faces.faces], head_cost)
        people = [Person(box, classify(posed[pose_of[k]][1], min_vis) if k in pose_of else None,
                         faces.faces[face_of[k]] if k in face_of else None) for k, box in enumerate(boxes)]
        claimed = set(face_of.values())
        return people + [Person(f.box, None, f) for k, f in enumerate(faces.faces) if k not in claimed], "instances"
    people, used_faces = [], set()
    for pose in poses.people:
        face = faces.faces[pose.face_index] if pose.face_index is not None and pose.face_index < len(faces.faces) else None
        if face is not None:
            used_faces.add(pose.face_index)
        posture = classify(pose.landmarks, min_vis) if pose.landmarks is not None else None
        people.append(Person(pose.box(min_vis), posture, face))
    people += [Person(f.box, None, f) for k, f in enumerate(faces.faces) if k not in used_faces]
    source = "persons+faces" if poses.source == "persons+faces" else "pose+faces"
    return sorted(people, key=lambda p: (p.box[0], p.box[1])), source


def parse_count(value: object) -> int:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and float(value).is_integer():
        return int(value)
    text = str(value).strip().lower()
    if text.isdigit():
        return int(text)
    if text in _NUMBERS:
        return _NUMBERS[text]
    raise ValueError(f"count={value!r} is not a whole number")


def expression_label(value: str, synonyms: Mapping[str, Sequence[str]]) -> str:
    word = " ".join(str(value).lower().split())
    for label, words in synonyms.items():
        if word == label or word in words:
            return label
    raise ValueError(f"expression={value!r} is not a known expression (known: {', '.join(sorted(synonyms))})")


def calibrated(expression: dict[str, float], neutral_weight: float) -> dict[str, float]:
    """The classifier's probabilities with p(neutral) multiplied by NEUTRAL_WEIGHT and renormalised.

    The FER2013 mini-Xception reads calm faces in photographs as sad or angry (3 of the 5 neutral faces of the
    tuning photos, with neutral second at 0.12-0.32 of the mass); a prior on neutral undoes that while a clear
    expression keeps its label (docs/metrics/cpa.md, Expression calibration)."""
    weighted = {k: v * (neutral_weight if k == "neutral" else 1.0) for k, v in expression.items()}
    total = sum(weighted.values())
    return {k: v / total for k, v in weighted.items()} if total > 0 else dict(expression)


def expression_similarity(expected: str, face: Face | None, neutral_weight: float = 1.0) -> float:
    """p(expected)/p(top class) after calibration: 1 when the expected expression is the classifier's choice,
    smaller as it ranks lower; 0 when no face (or no expression) was seen for the person."""
    if face is None or not face.expression:
        return 0.0
    probs = calibrated(face.expression, neutral_weight)
    return probs.get(expected, 0.0) / max(max(probs.values()), 1e-9)


def _per_person(value: object, n: int) -> list[Any] | None:
    """A per-person list as given, or one value repeated for each of the N expected people."""
    if value is None:
        return None
    return list(value) if isinstance(value, (list, tuple)) else [value] * n


def cpa(people: list[Person], controls: dict[str, Any], params: CPAParams, role: str | None) -> dict[str, Any]:
    """Sub-scores and the combined score; raises ValueError on malformed ground truth."""
    count = parse_count(controls["count"]) if "count" in controls else None
    lists = {k: len(controls[k]) for k in ("posture", "expression") if isinstance(controls.get(k), (list, tuple))}
    if len(set(lists.values()) | ({count} if count is not None and lists else set())) > 1:
        given = ", ".join(f"{k} lists {n}" for k, n in lists.items())
        raise ValueError(f"per-person lists disagree on the number of people ({given}"
                         + (f", count={count})" if count is not None else ")"))
    n_gt = count if count is not None else (max(lists.values()) if lists else 1)
    postures = _per_person(controls.get("posture"), n_gt) if n_gt else None   # count=0: nobody to describe
    expressions = _per_person(controls.get("expression"), n_gt) if n_gt else None
    if postures is not None:
        postures = [parse_posture(p, params.posture_synonyms) for p in postures]
    if expressions is not None:
        expressions = [expression_label(e, params.expression_synonyms) for e in expressions]
    partial = float(params.partial_credit)

    sim_p = np.array([[posture_similarity(postures[j], p.posture, partial) if postures else 0.0 for j in range(n_gt)]
                      for p in people]).reshape(len(people), n_gt)
    neutral_weight = float(params.neutral_weight)
    sim_e = np.array([[expression_similarity(expressions[j], p.face, neutral_weight) if expressions else 0.0 for j in range(n_gt)]
                      for p in people]).reshape(len(people), n_gt)
    rows, cols = linear_sum_assignment(-(sim_p + sim_e)) if people and n_gt else (np.array([], int), np.array([], int))

    s_count = None
    if count is not None:
        s_count = (1.0 if not people else 0.0) if count == 0 else max(0.0, 1.0 - abs(len(people) - count) / count)
    s_posture = float(sim_p[rows, cols].sum() / n_gt) if postures and n_gt else None
    s_expression = float(sim_e[rows, cols].sum() / n_gt) if expressions and n_gt else None
    weights = role_weights(params, role)
    score = combine_one(s_count, s_posture, s_expression, weights)
    matches = {int(r): int(c) for r, c in zip(rows, cols)}
    return {"score": score, "s_count": s_count, "s_posture": s_posture, "s_expression": s_expression,
            "weights": weights, "n_expected": n_gt, "n_detected": len(people),
            "people": [_describe(p, matches.get(i), neutral_weight) for i, p in enumerate(people)]}


def _describe(person: Person, match: int | None, neutral_weight: float) -> dict[str, Any]:
    out: dict[str, Any] = {"box": [round(v, 1) for v in person.box], "matched_to": match,
           "posture": list(person.posture.labels) if person.posture else None}
    if person.face is not None and person.face.expression:
        probs = calibrated(person.face.expression, neutral_weight)
        top = max(probs, key=lambda label: probs[label])
        out["expression"] = top
        out["expression_p"] = round(probs[top], 4)
    return out


def _cpa(features: dict[str, Any], controls: dict[str, Any], params: CPAParams, prompt: Any) -> MetricResult:
    if not any(k in controls for k in ("count", "posture", "expression")):
        return MetricResult.error("no ground truth: give count=, posture= or expression=")
    people, source = people_from(features, params)
    try:
        result = cpa(people, controls, params, getattr(prompt, "role", None))
    except ValueError as exc:
        return MetricResult.error(str(exc))
    score = result.pop("score")
    note = getattr(features["pose"], "note", None)
    extra = {"person_source": source}
    if note and source == "pose+faces":   # the person detector is configured but its weight is missing
        extra["degraded"] = f"no person detector, {note}"
    if score is None:
        return MetricResult.skipped("no applicable term (all weights zero)", **result, **extra)
    return MetricResult.ok(score, **result, **extra)


METRIC = Metric(name="CPA", angle="CPA", version="6", features=("pose", "faces"), fn=_cpa, combine=COMBINE,
                optional=("instances",), params=CPAParams)
