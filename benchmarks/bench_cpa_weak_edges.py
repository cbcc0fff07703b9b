"""Weak person boxes at the frame's edge on CPA's TUNING photos and crops: which would fix a count, which would
break one, and how much body MediaPipe Pose sees in each (how `weak_edge_min_landmarks` was chosen).

    python benchmarks/bench_cpa_weak_edges.py

For every tuning photo, tuning crop (vistar.validity.cpa, seed 0, 60 crops) and tuning photo without people, the
person detector's border boxes scoring 0.12-0.3 whose addition changes the count (faces fused as CPA fuses them)
are printed with: `fixes` (the count becomes right), `breaks` (it was right) or `neither`; the box's score; and the
number of pose landmarks with visibility >= 0.5 inside the box when Pose runs on the box grown by a quarter.
"""
from __future__ import annotations

import numpy as np
from skimage import data

from vistar.api import StageContext, StageInput
from vistar.features import faces
from vistar.features.persons import SSDPersonDetector, fuse
from vistar.features.pose import MediaPipePose, _grown
from vistar.models import resolve_weight
from vistar.ontology import Ontology
from vistar.validity import cpa


def items():
    images, _ = cpa._photos("tuning")
    for photo in (p for p in cpa.PHOTOS if p.name in images):
        yield photo.name, (len(photo.people), len(photo.people) + len(photo.optional)), images[photo.name]
    for crop in cpa.draw_crops(images, 60, 0, cpa.TUNING):
        yield crop.name, (len(crop.people), len(crop.people) + crop.optional), crop.image
    for name in cpa.NO_PEOPLE["tuning"]:
        image = getattr(data, name)()
        yield name, (0, 0), np.stack([image] * 3, -1) if image.ndim == 2 else image[..., :3]


def landmarks_inside(image, box, pose) -> int:
    left, top, right, bottom = _grown(box, *image.shape[1::-1])
    found = pose(np.ascontiguousarray(image[top:bottom, left:right]))
    if found is None:
        return 0
    x, y = found[:, 0] + left, found[:, 1] + top
    return int(((x >= box[0]) & (x <= box[2]) & (y >= box[1]) & (y <= box[3]) & (found[:, 3] >= 0.5)).sum())


def main() -> None:
    ctx = StageContext(features=Ontology.load().data["features"], model_paths={"fer-mini-xception": "/dev/null/absent"})
    detector = SSDPersonDetector(resolve_weight("ssd-mobilenet-v2-coco"), weak_score=0.12)
    pose = MediaPipePose()
    print(f"{'item':45s} {'effect':8s} {'score':>5s} {'landmarks inside':>16s}")
    for name, (lo, hi), image in items():
        image = np.ascontiguousarray(image)
        face_boxes = [f.box for f in faces.STAGE.compute([StageInput(image, None, {}, {})], ctx)[0].faces]
        kept, weak = detector.candidates(image)
        base = len(fuse(kept, face_boxes))
        for box in weak:
            count = len(fuse(kept + [box], face_boxes))
            if count == base:
                continue
            effect = "fixes" if lo <= count <= hi else "breaks" if lo <= base <= hi else "neither"
            print(f"{name[:45]:45s} {effect:8s} {box.score:5.2f} {landmarks_inside(image, box.box, pose):16d}")


if __name__ == "__main__":
    main()
