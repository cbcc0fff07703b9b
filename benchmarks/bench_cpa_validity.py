"""CPA people counting on real photos arranged as group shots: does the count follow the number of people?

    python benchmarks/bench_cpa_validity.py

Rows of N = 1..6 portraits (scikit-image's astronaut and camera, matplotlib's grace_hopper, and their mirror
images) at 256 and 512 px high, so a row of six is about 6:1; the same rows shrunk to 1024 px on the long side;
2-row grids of 4-6; one portrait small in a 1024² canvas; and face-free photos side by side (coffee, chelsea,
rocket, brick, hubble_deep_field, page) for false detections. People come from pose + faces (no `instances`
weights). Printed per case: faces and poses found, and CPA with count=N, N-1 and N+1 (count only).
"""
from __future__ import annotations

import numpy as np
from matplotlib import cbook
from PIL import Image
from skimage import data

from vistar.api import StageContext, StageInput
from vistar.engine.params import metric_params
from vistar.features import faces, pose
from vistar.metrics.cpa import METRIC
from vistar.ontology import Ontology


def fit(image: np.ndarray, height: int) -> np.ndarray:
    return np.asarray(Image.fromarray(np.ascontiguousarray(image)).resize((round(image.shape[1] * height / image.shape[0]), height)))


def row(images, height: int) -> np.ndarray:
    return np.concatenate([fit(i, height) for i in images], 1)


def stack(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    width = max(top.shape[1], bottom.shape[1])
    pad = lambda x: np.pad(x, ((0, 0), (0, width - x.shape[1]), (0, 0)), constant_values=200)  # noqa: E731
    return np.concatenate([pad(top), pad(bottom)], 0)


def cases() -> dict[str, tuple[np.ndarray, int]]:
    hopper = np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB"))
    camera = np.stack([data.camera()] * 3, -1)
    pool = [data.astronaut(), hopper, camera]
    pool += [p[:, ::-1] for p in pool]
    out = {}
    for n in range(1, 7):
        people = [pool[(2 * k + n) % len(pool)] for k in range(n)]
        for height in (256, 512):
            out[f"row of {n}, {height} px high"] = (row(people, height), n)
        wide = row(people, 512)
        out[f"row of {n}, 1024 long side"] = (fit(wide, round(wide.shape[0] * 1024 / max(wide.shape[:2]))), n)
        if n >= 4:
            half = (n + 1) // 2
            out[f"2 rows, {n} people"] = (stack(row(people[:half], 256), row(people[half:], 256)), n)
    canvas = np.full((1024, 1024, 3), 200, np.uint8)
    small = fit(hopper, 256)
    canvas[384:640, 512 - small.shape[1] // 2:512 - small.shape[1] // 2 + small.shape[1]] = small
    out["one portrait 256 px in 1024²"] = (canvas, 1)
    empty = [data.coffee(), data.chelsea(), data.rocket(), np.stack([data.brick()] * 3, -1), data.hubble_deep_field(),
             np.stack([data.page()] * 3, -1)]
    out["6 face-free photos in a row"] = (row(empty, 384), 0)
    return out


def main() -> None:
    ontology = Ontology.load()
    params = metric_params(ontology, "CPA")
    ctx = StageContext(features=ontology.data["features"], model_paths={"fer-mini-xception": "/dev/null/absent"})
    items = cases()
    inputs = [StageInput(np.ascontiguousarray(image), None, {}, {}) for image, _ in items.values()]
    found = faces.STAGE.compute(inputs, ctx)
    for item, f in zip(inputs, found):
        item.deps["faces"] = f
    poses = pose.STAGE.compute(inputs, ctx)
    right = 0
    print(f"{'case':32s} {'size':>10s} {'people':>6s} {'faces':>5s} {'poses':>5s}  CPA count=N  N-1   N+1")
    for (name, (image, n)), f, p in zip(items.items(), found, poses):
        feats = {"faces": f, "pose": p}
        score = lambda c: METRIC.fn(feats, {"count": c}, params, None).score  # noqa: E731
        right += METRIC.fn(feats, {"count": n}, params, None).details["n_detected"] == n
        below = f"{score(n - 1):5.2f}" if n >= 1 else "    -"
        print(f"{name:32s} {image.shape[1]:>5d}x{image.shape[0]:<4d} {n:6d} {len(f.faces):5d} {len(p.people):5d}  {score(n):9.2f} {below} {score(n + 1):5.2f}")
    print(f"\nright number of people in {right} of {len(items)} cases")


if __name__ == "__main__":
    main()
