"""Pose feature stage: MediaPipe Pose (legacy solution; the full landmark model ships inside the
mediapipe 0.10.21 wheel, the lite/heavy ones would be downloaded at run time, so only `full` is used).

MediaPipe Pose finds one person per call. With several detected faces (the `faces` stage) each person is
estimated on a crop around their face — a body-sized box below it — and kept only if the pose's nose lands
on that face, so one person is not reported twice. With one face or none, the whole image is used.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine.registry import FeatureStage, StageContext, StageInput
from ..models import record_loaded
from .faces import FaceResult


@dataclass(frozen=True)
class PosePerson:
    landmarks: np.ndarray   # (33, 4): x, y in image pixels, z (MediaPipe's relative depth), visibility in [0, 1]
    face_index: int | None  # the face (in the `faces` output) this pose was estimated around, if any

    def box(self, min_visibility: float = 0.5) -> tuple[float, float, float, float]:
        seen = self.landmarks[self.landmarks[:, 3] >= min_visibility]
        pts = seen if len(seen) else self.landmarks
        return (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))


@dataclass(frozen=True)
class PoseResult:
    people: tuple[PosePerson, ...]


class MediaPipePose:
    def __init__(self, min_detection_confidence: float = 0.5):
        import mediapipe
        from mediapipe.python.solutions import pose

        self.pose = pose.Pose(static_image_mode=True, model_complexity=1, enable_segmentation=False,
                              min_detection_confidence=min_detection_confidence)
        root = Path(mediapipe.__file__).parent / "modules"
        record_loaded("mediapipe/pose_detection.tflite", root / "pose_detection" / "pose_detection.tflite")
        record_loaded("mediapipe/pose_landmark_full.tflite", root / "pose_landmark" / "pose_landmark_full.tflite")

    def __call__(self, image: np.ndarray) -> np.ndarray | None:
        """(33, 4) landmarks in the pixel frame of IMAGE, or None."""
        height, width = image.shape[:2]
        result = self.pose.process(np.ascontiguousarray(image))
        if result.pose_landmarks is None:
            return None
        return np.array([(p.x * width, p.y * height, p.z, p.visibility) for p in result.pose_landmarks.landmark], np.float64)


def body_region(face_box, width: int, height: int) -> tuple[int, int, int, int]:
    """Where a person standing below FACE_BOX can be: 3 face-widths each side, 1 above, 9 below."""
    x0, y0, x1, y1 = face_box
    w = max(x1 - x0, y1 - y0)
    cx = (x0 + x1) / 2
    return (int(max(0, cx - 3 * w)), int(max(0, y0 - w)), int(min(width, cx + 3 * w)), int(min(height, y0 + 9 * w)))


def _nose_on_face(landmarks: np.ndarray, face_box, slack: float = 0.5) -> bool:
    x0, y0, x1, y1 = face_box
    dx, dy = slack * (x1 - x0), slack * (y1 - y0)
    x, y = landmarks[0, :2]
    return x0 - dx <= x <= x1 + dx and y0 - dy <= y <= y1 + dy


def estimate_people(image: np.ndarray, faces: FaceResult, pose, max_people: int = 8) -> PoseResult:
    height, width = image.shape[:2]
    if len(faces.faces) <= 1:
        landmarks = pose(image)
        if landmarks is not None:
            return PoseResult((PosePerson(landmarks, 0 if faces.faces else None),))
        if not faces.faces:
            return PoseResult(())
        # a small person in a large frame: the whole-image pass misses them, a body-sized crop does not
    people = []
    for index, face in enumerate(faces.faces[:max_people]):
        left, top, right, bottom = body_region(face.box, width, height)
        landmarks = pose(image[top:bottom, left:right])
        if landmarks is None:
            continue
        landmarks = landmarks + np.array([left, top, 0.0, 0.0])
        if _nose_on_face(landmarks, face.box):
            people.append(PosePerson(landmarks, index))
    return PoseResult(tuple(people))


def _compute(batch: list[StageInput], ctx: StageContext) -> list[PoseResult]:
    params = ctx.params("pose")
    pose = ctx.model("pose", lambda: MediaPipePose(float(params.get("min_detection_confidence", 0.5))))
    return [estimate_people(item.image, item.deps["faces"], pose, int(params.get("max_people", 8))) for item in batch]


STAGE = FeatureStage(name="pose", version="mediapipe-0.10.21-full/2", compute=_compute, requires=("faces",))
