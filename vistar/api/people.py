"""What the `faces` and `pose` stages give CPA: faces with expressions, people with body landmarks."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Face:
    box: tuple[float, float, float, float]       # x0, y0, x1, y1 in pixels
    score: float
    keypoints: tuple[tuple[float, float], ...]   # MediaPipe's 6: right eye, left eye, nose, mouth, right ear, left ear
    expression: dict[str, float] | None = None   # label -> probability (LABELS order)


@dataclass(frozen=True)
class FaceResult:
    faces: tuple[Face, ...]
    expression_note: str | None = None            # why expressions are absent, if they are


@dataclass(frozen=True)
class PersonBox:
    box: tuple[float, float, float, float]   # x0, y0, x1, y1 in pixels
    score: float


@dataclass(frozen=True)
class PosePerson:
    landmarks: np.ndarray | None   # (33, 4): x, y in image pixels, z (MediaPipe's relative depth), visibility in
                                   # [0, 1]; None: a detected person whose pose was not found
    face_index: int | None         # the face (in the `faces` output) this person has, if any
    detected: PersonBox | None = None   # the person detector's box, if the person came from it

    def box(self, min_visibility: float = 0.5) -> tuple[float, float, float, float]:
        if self.detected is not None:
            return self.detected.box
        if self.landmarks is None:
            raise ValueError("a person needs a detector box or landmarks to have a box")
        seen = self.landmarks[self.landmarks[:, 3] >= min_visibility]
        pts = seen if len(seen) else self.landmarks
        return (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))


@dataclass(frozen=True)
class PoseResult:
    people: tuple[PosePerson, ...]
    source: str = "faces"       # "persons+faces" when the person detector ran
    note: str | None = None     # why the person detector did not run, if it did not
