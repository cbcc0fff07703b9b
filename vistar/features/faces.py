"""Faces feature stage: MediaPipe face detection (models inside the mediapipe 0.10.21 wheel; both the full- and
the short-range model on the whole image and on square windows of an elongated one, merged by non-maximum
suppression, and overlapping tiles for small faces, each confirmed by both models)
plus each face's expression probabilities from the FER2013 mini-Xception, classified in an isolated worker process.

Expression weights come from the model layer (`fer-mini-xception`). When they are missing, faces are still
detected; an image whose prompt asks for an expression gets the MissingWeightError (its CPA row is skipped
and names the fetch command), other images simply carry no expressions.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

from ..api import Face, FaceResult, FeatureStage, StageContext, StageInput
from ..models import MissingWeightError, load_model, record_loaded
from .expression import INPUT_SIZE, LABELS
from .expression_worker import ExpressionWorker

DEFAULT_CLASSIFIER = "vistar.features.expression:ExpressionClassifier.from_path"


MODEL_FILE = {0: "face_detection_short_range.tflite", 1: "face_detection_full_range_sparse.tflite"}
INPUT_SIDE = {0: 128, 1: 192}   # each model's square input, in pixels


class MediaPipeFaceDetector:
    def __init__(self, model_selection: int = 1, min_detection_confidence: float = 0.5, tiles: int = 4,
                 tile_overlap: float = 0.25, tile_min_side: int = 64, max_tiles: int = 40,
                 verify_context: float = 5.0, verify_score: float = 0.65):
        import mediapipe
        from mediapipe.python.solutions import face_detection

        self.detector = face_detection.FaceDetection(model_selection=model_selection,
                                                     min_detection_confidence=min_detection_confidence)
        self.min_detection_confidence = float(min_detection_confidence)
        self.tiles, self.tile_overlap, self.tile_min_side = int(tiles), float(tile_overlap), int(tile_min_side)
        self.max_tiles = int(max_tiles)
        self.verify_context, self.verify_score = float(verify_context), float(verify_score)
        # both models detect on the whole image and its windows (the other range's at VERIFY_SCORE), and the tile
        # pass confirms its faces with both (see __call__ and small_faces)
        self.other = face_detection.FaceDetection(model_selection=1 - model_selection,
                                                  min_detection_confidence=self.verify_score)
        self.models = [(self.detector, INPUT_SIDE[model_selection], self.min_detection_confidence),
                       (self.other, INPUT_SIDE[1 - model_selection], self.verify_score)]
        for selection in (model_selection, 1 - model_selection):
            record_loaded(f"mediapipe/{MODEL_FILE[selection]}",
                          Path(mediapipe.__file__).parent / "modules" / "face_detection" / MODEL_FILE[selection])

    def __call__(self, image: np.ndarray) -> list[Face]:
        """Faces of the whole image, plus those found in square windows along the long side of an elongated one,
        plus small faces found in overlapping tiles.

        The detector letterboxes its input to a square, so in a 3:1 group shot every face shrinks threefold and
        most are lost (2 of 6 people found in a row of six portraits). Square windows of the short side, half
        overlapping, show it faces at the scale a square image would; a window's face is added unless it touches
        the window's inner edge (cut: a neighbouring window holds it whole), overlaps a face already found, or is
        smaller than MIN_WINDOW_FACE of the window (about 15 px on the detector's 192 px input, where its rare false
        faces are: 20 px blobs in a row of face-free photos scored 0.6; true faces in windows were ≥ 14 %).

        Each pass runs both MediaPipe models, the other range's at VERIFY_SCORE, and merges their faces by
        non-maximum suppression (`_detect_both`): the full-range model misses turned faces that the short-range
        one finds (a coach in profile, 0.81 short range, nothing full range).

        Then the tile pass (`small_faces`) finds faces narrower than about 6 % of the short side, which the
        whole image shrinks below the detector's reach.
        """
        height, width = image.shape[:2]
        faces = self._detect_both(image)
        side = min(height, width)
        if max(height, width) > 1.2 * side:
            for box, (x, y), face in window_detections(image, self._detect_both):
                small = max(box[2] - box[0], box[3] - box[1]) < MIN_WINDOW_FACE * side
                if not small and all(_overlap(box, kept.box) < 0.3 for kept in faces):
                    faces.append(Face(box, face.score, tuple((px + x, py + y) for px, py in face.keypoints)))
        faces += self.small_faces(image, faces)
        return sorted(faces, key=lambda f: (f.box[0], f.box[1]))

    def small_faces(self, image: np.ndarray, found: list[Face]) -> list[Face]:
        """Faces too small for the whole-image pass, from overlapping square tiles, each confirmed in a close-up.

        The model needs a face about 11-18 px wide in its 192 px input, so the whole image (and each window of an
        elongated one) loses faces narrower than about 6 % of the short side, and crowds of them most (a 4 x 4
        crowd at 5 %: none found). Square tiles of side short side / TILES x (1 + TILE_OVERLAP), neighbours
        overlapping by TILE_OVERLAP of a tile (0.08 of the short side at 4 tiles: room for any face the whole
        pass misses), are each run through the detector, which letterboxes them to its input: at TILES = 4 it
        looks about three times closer. Tiles smaller than the input are magnified, which still helps: faces of
        10-15 px in a 256 px image are found in 80 px tiles. The pass is skipped when a tile would be smaller
        than TILE_MIN_SIDE px; in an elongated image tiles grow until there are at most MAX_TILES (a 16:9 image
        keeps its 4 x 8 tiles of 0.31 short sides, a 3:1 one gets 3 x 10 of 0.42). A tile's face is a candidate
        unless it touches the tile's inner edge (cut: a neighbouring tile holds it whole) or overlaps a face
        already found; candidates found in two tiles are merged (non-maximum suppression in image coordinates:
        the higher score is kept).

        At this magnification the detector finds faces in textures (blobs in scikit-image's Hubble deep field
        and in a printed page, scored 0.6-0.8, as high as true small faces). A candidate is therefore kept only
        if both MediaPipe models find a face centred inside its box in a square close-up VERIFY_CONTEXT box
        widths wide (the face a fifth of the input): the same model at MIN_DETECTION_CONFIDENCE and the other
        range's model at VERIFY_SCORE. True faces pass both (97-99 % of them), while the texture faces that
        fooled one model did not fool the other above 0.59.
        """
        height, width = image.shape[:2]
        side = min(height, width)
        tile = int(np.ceil(side / max(self.tiles, 1) * (1 + self.tile_overlap)))
        if self.tiles < 2 or tile < self.tile_min_side or tile >= side:
            return []
        while True:   # an elongated image: tiles grow until there are at most MAX_TILES
            step = max(1, int(tile * (1 - self.tile_overlap)))
            rows, cols = _starts(height, tile, step), _starts(width, tile, step)
            if len(rows) * len(cols) <= max(1, self.max_tiles) or tile >= side:
                break
            tile = min(side, int(np.ceil(tile * 1.1)))
        candidates = []
        for y in rows:
            for x in cols:
                for face in self._detect(image[y:y + tile, x:x + tile]):
                    x0, y0, x1, y1 = face.box
                    if not cut_by_inner_edge(face.box, x, y, tile, width, height):
                        candidates.append(Face((x0 + x, y0 + y, x1 + x, y1 + y), face.score,
                                               tuple((px + x, py + y) for px, py in face.keypoints)))
        kept: list[Face] = []
        for face in sorted(candidates, key=lambda f: -f.score):
            if all(_overlap(face.box, other.box) < 0.3 for other in [*found, *kept]):
                kept.append(face)
        return [face for face in kept if self._confirmed(image, face.box)]

    def _confirmed(self, image: np.ndarray, box) -> bool:
        """Both models find a face centred inside BOX in a square crop VERIFY_CONTEXT box sides wide around it."""
        x0, y0, x1, y1 = box
        half = max(x1 - x0, y1 - y0) * self.verify_context / 2
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        left, top, right, bottom = (round(v) for v in (cx - half, cy - half, cx + half, cy + half))
        height, width = image.shape[:2]
        crop = image[max(0, top):min(height, bottom), max(0, left):min(width, right)]
        if crop.size == 0:
            return False
        crop = cv2.copyMakeBorder(np.ascontiguousarray(crop), max(0, -top), max(0, bottom - height), max(0, -left),
                                  max(0, right - width), cv2.BORDER_REPLICATE)
        for model, side, threshold in self.models:
            scale = side / crop.shape[0]
            view = cv2.resize(crop, (side, side), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
            centres = [((f.box[0] + f.box[2]) / 2 / scale + left, (f.box[1] + f.box[3]) / 2 / scale + top)
                       for f in self._detect(view, model) if f.score >= threshold]
            if not any(x0 <= fx <= x1 and y0 <= fy <= y1 for fx, fy in centres):
                return False
        return True

    def _detect_both(self, image: np.ndarray) -> list[Face]:
        """Faces of both models, each at its own threshold; where they overlap (by more than 0.3 of the smaller
        box), the higher score is kept."""
        found = [f for model, _, threshold in self.models for f in self._detect(image, model) if f.score >= threshold]
        kept: list[Face] = []
        for face in sorted(found, key=lambda f: (-f.score, f.box)):
            if all(_overlap(face.box, other.box) < 0.3 for other in kept):
                kept.append(face)
        return kept

    def _detect(self, image: np.ndarray, model=None) -> list[Face]:
        height, width = image.shape[:2]
        result = (model or self.detector).process(np.ascontiguousarray(image))
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
    return _starts(length, side, max(1, side // 2))


def cut_by_inner_edge(box, x: int, y: int, size: int, width: int, height: int) -> bool:
    """Whether BOX, found in the SIZE-square window at (X, Y) of a WIDTH x HEIGHT image, touches a window edge
    that lies inside the image: the overlapping neighbour window sees that object whole."""
    x0, y0, x1, y1 = box
    return (x0 <= 1 and x > 0) or (y0 <= 1 and y > 0) or (x1 >= size - 1 and x + size < width) or \
        (y1 >= size - 1 and y + size < height)


def window_detections(image: np.ndarray, detect):
    """What DETECT finds in square windows along IMAGE's long side, as (box in image coordinates, window offset
    (x, y), detection); a box cut by a window edge that lies inside the image is left out: the overlapping
    neighbour window sees that object whole."""
    height, width = image.shape[:2]
    side = min(height, width)
    for start in square_windows(max(height, width), side):
        x, y = (start, 0) if width > height else (0, start)
        for found in detect(image[y:y + side, x:x + side]):
            x0, y0, x1, y1 = found.box
            if not cut_by_inner_edge(found.box, x, y, side, width, height):
                yield (x0 + x, y0 + y, x1 + x, y1 + y), (x, y), found


def _starts(length: int, size: int, step: int) -> list[int]:
    """Starts of windows of SIZE every STEP covering LENGTH (the last one flush with the end)."""
    if size >= length:
        return [0]
    starts = list(range(0, length - size + 1, step))
    return starts if starts[-1] == length - size else starts + [length - size]


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


@dataclass(frozen=True)
class FacesParams:
    """`features.faces` (meaning: vistar/data/ontology.yaml, docs/metrics/cpa.md)."""

    model_selection: Literal[0, 1] = 1    # 0 = short range (< 2 m), 1 = full range (< 5 m)
    min_detection_confidence: float = 0.5
    expression_model: str = "fer-mini-xception"
    worker_timeout_s: float = 60
    tiles: int = 4
    tile_overlap: float = 0.25
    tile_min_side: int = 64
    max_tiles: int = 40
    verify_context: float = 5.0
    verify_score: float = 0.65
    classifier: str = DEFAULT_CLASSIFIER  # "module:callable" building the expression classifier from its weight path


def _worker(ctx: StageContext, params: FacesParams) -> ExpressionWorker | MissingWeightError:
    def load():
        name = params.expression_model
        try:
            return load_model(name, ctx, lambda path: ExpressionWorker(params.classifier, str(path),
                                                                       float(params.worker_timeout_s)),
                              recorded=lambda path: path if path.is_file() else path / "emotion_model.hdf5")
        except MissingWeightError as exc:
            return exc

    return ctx.model("faces:expression", load)


def _compute(batch: list[StageInput], ctx: StageContext) -> list:
    params = ctx.params("faces", FacesParams)
    detector = ctx.model("faces:detector", lambda: MediaPipeFaceDetector(
        params.model_selection, float(params.min_detection_confidence), params.tiles, float(params.tile_overlap),
        params.tile_min_side, params.max_tiles, float(params.verify_context), float(params.verify_score)))
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
        except Exception as exc:  # this image's expression failed (worker crash included); the run goes on, and
            # an item that asks for no expression keeps its faces (CPA's head count needs only them)
            outputs.append(exc if "expression" in item.controls else FaceResult(tuple(faces), str(exc)))
            continue
        outputs.append(FaceResult(tuple(Face(f.box, f.score, f.keypoints, {l: float(p) for l, p in zip(LABELS, row)})
                                        for f, row in zip(faces, probs))))
    return outputs


STAGE = FeatureStage(name="faces", version="mediapipe-0.10.21+fer-mini-xception/4", compute=_compute,
                     models=("fer-mini-xception",), params=FacesParams)
