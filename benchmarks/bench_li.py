"""LI validity benchmark: angular error of the estimated light direction on rendered scenes, per anchor.

    python benchmarks/bench_li.py [--seeds N] [--oracle-shadows]

Each of the 16 ontology anchors lights N seeded scenes (vistar.synth.lighting); the classical shadow detector
and LI geometry estimate the direction; a scene with no usable object-shadow pair counts as a 90° miss.
--oracle-shadows feeds the renderer's exact shadow masks instead, isolating the geometry's share of the error.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from vistar.engine.params import metric_params
from vistar.features.shadows_classical import ClassicalShadowDetector
from vistar.metrics.li import estimate_light
from vistar.metrics.light_geometry import anchors_from_params, angle_between
from vistar.ontology import Ontology
from vistar.synth.lighting import sample_scene


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--oracle-shadows", action="store_true")
    args = parser.parse_args()
    params = metric_params(Ontology.load(), "LI")
    detector = ClassicalShadowDetector()
    errors, misses, start = [], 0, time.perf_counter()
    print(f"{'anchor':34s} {'median':>7s} {'max':>7s}  errors (deg)")
    for k, anchor in enumerate(anchors_from_params(params.anchors)):
        row = []
        for s in range(args.seeds):
            scene = sample_scene(anchor.vector, seed=1000 * k + s)
            shadow = scene.shadow if args.oracle_shadows else detector(scene.image, scene.instances)
            estimate, _, _ = estimate_light(scene.instances, shadow, params)
            misses += estimate is None
            row.append(90.0 if estimate is None else math.degrees(angle_between(estimate, anchor.vector)))
        errors += row
        print(f"{anchor.phrase:34s} {np.median(row):7.1f} {max(row):7.1f}  {' '.join(f'{e:.0f}' for e in row)}")
    e = np.asarray(errors)
    q = np.percentile(e, [25, 50, 75, 90])
    print(f"\nscenes {len(e)}  no-pair {misses}  median {q[1]:.1f}°  p25 {q[0]:.1f}°  p75 {q[2]:.1f}°  p90 {q[3]:.1f}°  "
          f"<=15°: {np.mean(e <= 15):.0%}  <=30°: {np.mean(e <= 30):.0%}  ({(time.perf_counter() - start) / len(e) * 1000:.0f} ms/scene)")


if __name__ == "__main__":
    main()
