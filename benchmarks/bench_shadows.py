"""The classical shadow detector before and after computing its lit level on a reduced image, in one run.

    python benchmarks/bench_shadows.py [--scenes 120] [--repeats 5]

- ms per 1024² image on one core (OpenCV limited to one thread), `lit_side: 0` (the closing at the 512-px
  working resolution, the detector before) against the default reduced closing;
- mask IoU between the two on rendered LI scenes (held-out seeds 910000+, light azimuth uniform, elevation
  15°-65°, 1-3 solids, camera pitch 25°-45°): pooled over all scenes, median and minimum per scene (scenes where
  neither finds a shadow count as 1);
- the LI light-direction error with each detector's masks on the same scenes (median and p90, degrees; a scene
  without a usable object-shadow pair counts as 90°), so a speed-up never hides an accuracy change;
- with torch installed, the batched torch detector on `--device` (CPU tensors by default, `cuda` on a GPU machine):
  IoU against the numpy detector, and ms per 1024² image at batch 4 after a warm-up batch.
"""
from __future__ import annotations

import argparse
import math
import time

import cv2
import numpy as np

from vistar.engine.params import metric_params
from vistar.features.shadows_classical import ClassicalShadowDetector
from vistar.metrics.li import estimate_light
from vistar.metrics.light_geometry import angle_between
from vistar.ontology import Ontology
from vistar.synth.lighting import sample_scene


def vector(azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    return np.array([math.sin(az) * math.cos(el), math.sin(el), math.cos(az) * math.cos(el)])


def scenes(n: int, size=(240, 320)) -> list:
    rng = np.random.default_rng(910000)
    return [sample_scene(vector(rng.uniform(0, 360), rng.uniform(15, 65)), 910000 + i, size=size) for i in range(n)]


def ms_per_image(detector, scene, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        detector(scene.image, scene.instances)
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def iou_stats(a: list[np.ndarray], b: list[np.ndarray]) -> tuple[float, float, float]:
    per = [1.0 if not (x | y).any() else (x & y).sum() / (x | y).sum() for x, y in zip(a, b)]
    pooled = sum((x & y).sum() for x, y in zip(a, b)) / max(1, sum((x | y).sum() for x, y in zip(a, b)))
    return float(pooled), float(np.median(per)), float(min(per))


def li_errors(masks: list[np.ndarray], items: list, params: dict) -> tuple[float, float]:
    errors = []
    for mask, scene in zip(masks, items):
        estimate = estimate_light(scene.instances, mask, params)[0]
        errors.append(90.0 if estimate is None else math.degrees(angle_between(estimate, scene.light)))
    return float(np.median(errors)), float(np.percentile(errors, 90))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenes", type=int, default=120)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu", help="where the torch detector runs (cuda on a GPU machine)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    before, after = ClassicalShadowDetector(lit_side=0), ClassicalShadowDetector()
    big = sample_scene(vector(40, 35), 910999, size=(1024, 1024))
    t_before, t_after = ms_per_image(before, big, args.repeats), ms_per_image(after, big, args.repeats)
    print(f"1024² image, one core: before {t_before:.1f} ms, after {t_after:.1f} ms ({t_before / t_after:.1f}x)")

    items = scenes(args.scenes)
    old = [before(s.image, s.instances) for s in items]
    new = [after(s.image, s.instances) for s in items]
    pooled, median, worst = iou_stats(new, old)
    print(f"mask IoU after vs before on {len(items)} LI scenes: pooled {pooled:.4f}, median {median:.4f}, min {worst:.4f}")
    params = metric_params(Ontology.load(), "LI")
    for label, masks in (("before", old), ("after", new)):
        med, p90 = li_errors(masks, items, params)
        print(f"LI error with the {label:6} masks: median {med:.1f}°, p90 {p90:.1f}°")
    try:
        import torch
    except ModuleNotFoundError:
        print("torch not installed: torch detector not measured")
        return
    from vistar.features.shadows_torch import detect_batch

    torch.set_num_threads(1)
    masks = detect_batch([s.image for s in items], [s.instances for s in items], after, device=args.device)
    pooled, median, worst = iou_stats(masks, new)
    print(f"torch ({args.device}) vs numpy: pooled IoU {pooled:.4f}, median {median:.4f}, min {worst:.4f}")
    batch = [big.image] * 4
    detect_batch(batch, [big.instances] * 4, after, device=args.device)   # warm-up (CUDA context, kernels)
    start = time.perf_counter()
    detect_batch(batch, [big.instances] * 4, after, device=args.device)
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    print(f"torch on {args.device}, batch 4 of 1024²: {1000 * (time.perf_counter() - start) / 4:.1f} ms per image")


if __name__ == "__main__":
    main()
