"""Pose feature stage: who the people are, and each one's body landmarks.

People come from a person detector (`features.persons`, SSD-MobileNet-v2) fused with the `faces` stage's faces:
a person box, or a face no box claims. MediaPipe Pose (legacy solution; the full landmark model ships inside the
mediapipe 0.10.21 wheel, the lite/heavy ones would be downloaded at run time, so only `full` is used) finds one
person per call, so each person is estimated on their own crop: the person box, or for a face-only person a
body-sized box below the face, kept only if the pose's nose lands on that face. A person whose pose is not
found is still a person (no landmarks, no posture).

Without the detector's weights, people come from the faces alone, as before the detector: with one face or
none the whole image is tried first.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..api import FaceResult, FeatureStage, PersonBox, PosePerson, PoseResult, StageContext, StageInput
from ..models import MissingWeightError, load_model, record_loaded
from .persons import MODEL as PERSON_MODEL, SSDPersonDetector, fuse


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


def estimate_people(image: np.ndarray, faces: FaceResult, pose, max_people: int = 8,
                    persons: list[PersonBox] | None = None, duplicate_iou: float = 0.5,
                    duplicate_inside: float = 0.8, same_top: float = 0.3) -> PoseResult:
    """People of IMAGE with their landmarks; PERSONS: the person detector's boxes (None: it did not run)."""
    if persons is None:
        return _people_from_faces(image, faces, pose, max_people)
    height, width = image.shape[:2]
    found = fuse(persons, [f.box for f in faces.faces], duplicate_iou, duplicate_inside, same_top)
    people = []
    for k, (person, face_index) in enumerate(found):
        if person is None:
            landmarks = _around_face(image, faces.faces[face_index].box, pose) if k < max_people else None
            if landmarks is not None:
                people.append(PosePerson(landmarks, face_index))
            continue   # a face-only person without a pose: CPA counts the face itself
        landmarks = _in_box(image, person.box, pose, alone=len(found) == 1) if k < max_people else None
        people.append(PosePerson(landmarks, face_index, person))
    return PoseResult(tuple(people), "persons+faces")


def _in_box(image: np.ndarray, box, pose, alone: bool) -> np.ndarray | None:
    """The pose of the person in BOX: from the whole image when they are ALONE in it (MediaPipe Pose finds people
    best with context around them: the cameraman's box crop gave no pose, the whole photo a standing one), else
    or failing that from the box grown by a quarter of its size each side, kept when its nose is in the box."""
    if alone:
        landmarks = pose(image)
        if landmarks is not None and _nose_on_face(landmarks, box, slack=0.0):
            return landmarks
    left, top, right, bottom = _grown(box, *image.shape[1::-1])
    if right <= left or bottom <= top:
        return None
    landmarks = pose(image[top:bottom, left:right])
    return None if landmarks is None else landmarks + np.array([left, top, 0.0, 0.0])


def _grown(box, width: int, height: int, margin: float = 0.25) -> tuple[int, int, int, int]:
    """BOX enlarged by MARGIN of its size on each side (the detector's box may clip hands and feet), in the image."""
    x0, y0, x1, y1 = box
    dx, dy = margin * (x1 - x0), margin * (y1 - y0)
    return (int(max(0, x0 - dx)), int(max(0, y0 - dy)), int(min(width, x1 + dx)), int(min(height, y1 + dy)))


def body_seen(image: np.ndarray, box, pose, min_landmarks: int, min_visibility: float = 0.5) -> bool:
    """MediaPipe Pose, run on BOX grown by a quarter, puts at least MIN_LANDMARKS visible landmarks inside BOX: the
    partial-body evidence that makes a weak detector box at the frame's edge a person (a sliver of arm and legs
    at bus.jpg's left edge: 33 of 33; on the tuning photos' weak edge boxes on nobody, at most 15)."""
    left, top, right, bottom = _grown(box, *image.shape[1::-1])
    if right <= left or bottom <= top:
        return False
    landmarks = pose(image[top:bottom, left:right])
    if landmarks is None:
        return False
    x, y = landmarks[:, 0] + left, landmarks[:, 1] + top
    inside = (x >= box[0]) & (x <= box[2]) & (y >= box[1]) & (y <= box[3]) & (landmarks[:, 3] >= min_visibility)
    return int(inside.sum()) >= min_landmarks


def _around_face(image: np.ndarray, face_box, pose) -> np.ndarray | None:
    """The pose of the person below FACE_BOX, or None if none is found or its nose is not on that face."""
    height, width = image.shape[:2]
    left, top, right, bottom = body_region(face_box, width, height)
    landmarks = pose(image[top:bottom, left:right])
    if landmarks is None:
        return None
    landmarks = landmarks + np.array([left, top, 0.0, 0.0])
    return landmarks if _nose_on_face(landmarks, face_box) else None


def _people_from_faces(image: np.ndarray, faces: FaceResult, pose, max_people: int) -> PoseResult:
    """Without a person detector: the whole image when there is at most one face, else one pose per face."""
    if len(faces.faces) <= 1:
        landmarks = pose(image)
        if landmarks is not None:
            return PoseResult((PosePerson(landmarks, 0 if faces.faces else None),))
        if not faces.faces:
            return PoseResult(())
        # a small person in a large frame: the whole-image pass misses them, a body-sized crop does not
    people = []
    for index, face in enumerate(faces.faces[:max_people]):
        landmarks = _around_face(image, face.box, pose)
        if landmarks is not None:
            people.append(PosePerson(landmarks, index))
    return PoseResult(tuple(people))


@dataclass(frozen=True)
class PoseParams:
    """`features.pose` (meaning: vistar/data/ontology.yaml, docs/metrics/cpa.md)."""

    min_detection_confidence: float = 0.5
    max_people: int = 8
    person_model: str | None = PERSON_MODEL   # None: people from the faces only
    min_person_score: float = 0.5
    edge_person_score: float = 0.3
    weak_edge_person_score: float = 1.0   # 1.0: no weak border box is looked at
    weak_edge_min_landmarks: int = 33
    person_nms_iou: float = 0.6
    person_duplicate_iou: float = 0.5
    person_duplicate_inside: float = 0.8
    person_same_top: float = 0.3


def _person_detector(ctx: StageContext, params: PoseParams) -> SSDPersonDetector | MissingWeightError | None:
    """The person detector, the MissingWeightError saying how to fetch it, or None when switched off."""
    name = params.person_model
    if not name:
        return None

    def load():
        try:
            return load_model(name, ctx, lambda path: SSDPersonDetector(
                path, float(params.min_person_score), float(params.person_nms_iou), float(params.edge_person_score),
                weak_score=float(params.weak_edge_person_score)),
                recorded=lambda path: path / "frozen_inference_graph.pb" if path.is_dir() else path)
        except MissingWeightError as exc:
            return exc

    return ctx.model(f"pose:persons:{name}", load)


def _compute(batch: list[StageInput], ctx: StageContext) -> list[PoseResult]:
    params = ctx.params("pose", PoseParams)
    pose = ctx.model("pose", lambda: MediaPipePose(float(params.min_detection_confidence)))
    detector = _person_detector(ctx, params)
    max_people = params.max_people
    out = []
    min_landmarks = params.weak_edge_min_landmarks
    for item in batch:
        if isinstance(detector, SSDPersonDetector):
            persons, weak = detector.candidates(item.image)
            persons += [box for box in weak if body_seen(item.image, box.box, pose, min_landmarks)]
            out.append(estimate_people(item.image, item.deps["faces"], pose, max_people, persons,
                                       float(params.person_duplicate_iou), float(params.person_duplicate_inside),
                                       float(params.person_same_top)))
        else:
            result = estimate_people(item.image, item.deps["faces"], pose, max_people)
            out.append(PoseResult(result.people, result.source, str(detector) if detector else None))
    return out


STAGE = FeatureStage(name="pose", version="mediapipe-0.10.21-full+ssd-mobilenet-v2/6", compute=_compute,
                     requires=("faces",), models=(PERSON_MODEL,), params=PoseParams)
