"""Posture from body landmarks (MediaPipe Pose's 33, image pixels, y down) by geometric rules.

Every rule is scale-free: lengths are in torso lengths (mid-shoulder to mid-hip; 1.3 shoulder widths when
the hips are unseen), angles are measured against the image vertical. The rules and their thresholds are
listed in docs/metrics/cpa.md; a landmark below `min_visibility` counts as unseen and a rule needing it
does not fire.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

NOSE, L_SHOULDER, R_SHOULDER, L_ELBOW, R_ELBOW, L_WRIST, R_WRIST = 0, 11, 12, 13, 14, 15, 16
L_HIP, R_HIP, L_KNEE, R_KNEE, L_ANKLE, R_ANKLE = 23, 24, 25, 26, 27, 28

BODY_LABELS = ("standing", "walking", "running", "sitting", "kneeling", "crouching", "lying", "upright")
ARM_LABELS = ("arms_raised", "one_arm_raised", "arms_outstretched", "arms_down")

# Compatible labels earn partial credit (ontology `partial_credit`): the difference is a matter of degree
# or the evidence cannot separate them (`upright` = trunk upright, legs out of frame).
COMPATIBLE = {frozenset(p) for p in [("standing", "walking"), ("walking", "running"), ("kneeling", "crouching"),
                                      ("sitting", "crouching"), ("arms_raised", "one_arm_raised"),
                                      ("upright", "standing"), ("upright", "sitting"), ("upright", "walking"),
                                      ("upright", "running"), ("upright", "kneeling")]}

Visible = Callable[..., bool]   # are all these landmarks seen?


@dataclass(frozen=True)
class Posture:
    body: str | None                 # one of BODY_LABELS, None when the evidence is insufficient
    arms: str | None                 # one of ARM_LABELS, None when the wrists are unseen
    reasons: dict[str, Any] = field(default_factory=dict)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(x for x in (self.body, self.arms) if x)


def _tilt(vec: np.ndarray, down: bool) -> float:
    """Degrees between VEC and the image vertical (down or up)."""
    ref = np.array([0.0, 1.0 if down else -1.0])
    n = np.linalg.norm(vec)
    return float(math.degrees(math.acos(np.clip(vec @ ref / n, -1, 1)))) if n > 0 else 0.0


def _angle(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Interior angle at B in degrees."""
    u, v = a - b, c - b
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    return float(math.degrees(math.acos(np.clip(u @ v / (nu * nv), -1, 1)))) if nu > 0 and nv > 0 else 180.0


def classify(landmarks: np.ndarray, min_visibility: float = 0.5) -> Posture:
    pts, seen = landmarks[:, :2], landmarks[:, 3] >= min_visibility
    def vis(*idx: int) -> bool:
        return all(seen[i] for i in idx)

    if not vis(L_SHOULDER, R_SHOULDER):
        return Posture(None, None, {"why": "shoulders unseen"})
    shoulders = (pts[L_SHOULDER] + pts[R_SHOULDER]) / 2
    hips_seen = vis(L_HIP, R_HIP)
    hips = (pts[L_HIP] + pts[R_HIP]) / 2 if hips_seen else None
    torso = float(np.linalg.norm(shoulders - hips)) if hips_seen else 1.3 * float(np.linalg.norm(pts[L_SHOULDER] - pts[R_SHOULDER]))
    torso = max(torso, 1e-6)
    reasons: dict[str, Any] = {}
    body = _body(pts, vis, shoulders, hips, torso, reasons)
    arms = _arms(pts, vis, torso, reasons)
    return Posture(body, arms, reasons)


def _body(pts: np.ndarray, vis: Visible, shoulders: np.ndarray, hips: np.ndarray | None, torso: float,
          reasons: dict[str, Any]) -> str | None:
    if hips is None:
        line = pts[R_SHOULDER] - pts[L_SHOULDER]
        tilt = abs(math.degrees(math.atan2(line[1], abs(line[0]) + 1e-9)))
        reasons["shoulder_line_tilt"] = round(tilt, 1)
        nose_above = vis(NOSE) and pts[NOSE][1] < shoulders[1]
        return "upright" if tilt < 30 and nose_above else None
    trunk = _tilt(shoulders - hips, down=False)
    reasons["trunk_tilt"] = round(trunk, 1)
    if trunk > 60:
        return "lying"
    legs = []
    for hip, knee, ankle in ((L_HIP, L_KNEE, L_ANKLE), (R_HIP, R_KNEE, R_ANKLE)):
        if not vis(hip, knee):
            continue
        thigh = pts[knee] - pts[hip]
        leg = {"thigh_tilt": _tilt(thigh, down=True), "thigh_len": float(np.linalg.norm(thigh)) / torso}
        if vis(ankle):
            shin = pts[ankle] - pts[knee]
            leg.update(shin_tilt=_tilt(shin, down=True), knee_angle=_angle(pts[hip], pts[knee], pts[ankle]),
                       ankle_x=float(pts[ankle][0]))
        legs.append(leg)
    reasons["legs"] = [{k: round(v, 2) for k, v in leg.items()} for leg in legs]
    if not legs:
        return "upright" if trunk < 30 else None
    with_shin = [leg for leg in legs if "knee_angle" in leg]
    if any(leg["thigh_tilt"] < 40 and leg["shin_tilt"] > 55 for leg in with_shin):
        return "kneeling"                       # thigh vertical, shin flat on the ground
    if any(leg["knee_angle"] < 75 for leg in with_shin):
        return "crouching"                      # deep knee flexion
    if all(leg["thigh_tilt"] > 50 or leg["thigh_len"] < 0.45 for leg in legs):
        return "sitting"                        # thighs horizontal, or pointing at the camera (foreshortened)
    if all(leg["thigh_tilt"] < 35 for leg in legs):
        stride = (abs(with_shin[0]["ankle_x"] - with_shin[1]["ankle_x"]) / torso) if len(with_shin) == 2 else 0.0
        bent = min((leg["knee_angle"] for leg in with_shin), default=180.0)
        reasons["stride"] = round(stride, 2)
        if stride > 0.9 or (stride > 0.5 and bent < 120):
            return "running"
        if stride > 0.35:
            return "walking"
        return "standing"
    return None


def _arms(pts: np.ndarray, vis: Visible, torso: float, reasons: dict[str, Any]) -> str | None:
    raised, out, down, known = 0, 0, 0, 0
    for shoulder, elbow, wrist in ((L_SHOULDER, L_ELBOW, L_WRIST), (R_SHOULDER, R_ELBOW, R_WRIST)):
        if not vis(wrist):
            continue
        known += 1
        rise = (pts[shoulder][1] - pts[wrist][1]) / torso          # > 0: wrist above the shoulder
        reach = abs(pts[wrist][0] - pts[shoulder][0]) / torso
        straight = _angle(pts[shoulder], pts[elbow], pts[wrist]) > 150 if vis(elbow) else False
        if rise > 0.1:
            raised += 1
        elif abs(rise) < 0.25 and reach > 0.6 and straight:
            out += 1
        elif rise < -0.5:                                        # hanging: wrist half a torso below the shoulder
            down += 1
    reasons["arms"] = {"raised": raised, "outstretched": out, "down": down, "seen": known}
    if known == 0:
        return None
    if raised == 2:
        return "arms_raised"
    if raised == 1:
        return "one_arm_raised"
    if out == 2:
        return "arms_outstretched"
    return "arms_down" if known == 2 and down == 2 else None


def label_credit(expected: str, detected: tuple[str, ...], partial: float) -> float:
    """1 if EXPECTED was detected, PARTIAL if a compatible label was, else 0."""
    if expected in detected:
        return 1.0
    return partial if any(frozenset((expected, d)) in COMPATIBLE for d in detected) else 0.0


def posture_similarity(expected: tuple[str, ...], posture: Posture | None, partial: float) -> float:
    """Mean credit over the expected labels (e.g. ("standing", "arms_raised"))."""
    if not expected:
        return 1.0
    detected = posture.labels if posture else ()
    return sum(label_credit(e, detected, partial) for e in expected) / len(expected)


def parse_posture(text: str, synonyms: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """'standing with arms raised' -> ('standing', 'arms_raised'); longest synonym first, unknown words ignored;
    raises ValueError if nothing is recognised."""
    s = " " + " ".join(re.sub(r"[^a-z0-9]+", " ", str(text).lower()).split()) + " "
    found: list[tuple[int, str]] = []
    pairs = sorted(((w.replace("_", " "), label) for label, words in synonyms.items() for w in words),
                   key=lambda p: (-len(p[0]), p[0]))
    for word, label in pairs:                    # longest first: "one arm raised" before "arm raised"
        pos = s.find(f" {word} ")
        if pos >= 0:
            found.append((pos, label))
            s = s[:pos] + " " * (len(word) + 1) + s[pos + len(word) + 1:]
    labels = tuple(dict.fromkeys(label for _, label in sorted(found)))
    if not labels:
        known = ", ".join(sorted(synonyms))
        raise ValueError(f"posture {text!r} names no known posture (known: {known})")
    return labels
