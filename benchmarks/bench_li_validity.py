"""LI on held-out rendered scenes: seeds the tests never use, random light directions, 1-5 objects, extreme
elevations, and each solid kind alone.

    python benchmarks/bench_li_validity.py [anchors|random|count|elevation|kinds|shapes|crowded|pitch ...] [--split tuning]

anchors: the 16 ontology anchors × 8 scenes, seeds 50000 + 1000·k + s. random: 120 scenes, azimuth uniform,
elevation 15°-65°, seeds 70000+. count: 40 scenes each of 1..5 objects (random_solids), light at 20°-55°.
elevation: 5°-85°, 8 azimuths × 3 scenes. kinds: one box / cylinder / sphere, 6 scenes per anchor, exact
shadows and the assumed camera pitch (35°), so only the footprint-tip geometry is measured. shapes: each
kind alone with the generator's size ranges and a camera pitch drawn from 25°-45°, 128 scenes per kind (16
anchors x 4, then 64 random directions at 15°-65°), seeds 300000 + 1000·kind + i; and 128 mixed scenes
(sample_scene, 16 anchors x 8, seeds 400000 + 1000·k + s); each with exact shadows and with the detector.
crowded: 100 scenes each of 4 and 5 objects as in `count`, seeds 700000 + 1000·n + i, exact and detected.
The classical shadow detector is used except for `kinds`; a scene without a usable pair counts as 90°, and
a low-confidence (frontal) estimate is counted with its error: these sets measure the direction alone.
pitch: the validity set of vistar.validity.li (camera pitch 10°-45°, varied focal length and light elevation,
200 scenes; `--split tuning` for the set the pitch cue was chosen on) and its crowded set (3-5 solids in
each other's shadows, 200 scenes), one line per measure.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from vistar.engine.params import metric_params
from vistar.features.shadows_classical import ClassicalShadowDetector
from vistar.features.thumbnail import resize_longest
from vistar.metrics.li import estimate_light
from vistar.metrics.light_geometry import anchors_from_params, angle_between
from vistar.ontology import Ontology
from vistar.synth.lighting import Solid, random_solids, render, sample_scene
from vistar.validity.li import CROWDED_TUNING, CROWDED_VALIDATION, TUNING, VALIDATION, run_crowded, run_scenes

PARAMS = metric_params(Ontology.load(), "LI")
ANCHORS = anchors_from_params(PARAMS.anchors)
DETECTOR = ClassicalShadowDetector()


def vector(azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    return np.array([math.sin(az) * math.cos(el), math.sin(el), math.cos(az) * math.cos(el)])


def error(scene, exact: bool = False, shapes: list | None = None) -> float:
    shadow = scene.shadow if exact else DETECTOR(scene.image, scene.instances)
    estimate, pairs, _ = estimate_light(scene.instances, shadow, PARAMS, resize_longest(scene.image, 256))
    if shapes is not None:
        shapes += [p["shape"] for p in pairs if "shape" in p]
    return 90.0 if estimate is None else math.degrees(angle_between(estimate, scene.light))


def one_solid(kind: str, rng: np.random.Generator) -> Solid:
    """One solid of KIND with random_solids' size ranges, somewhere in view."""
    x, z = rng.uniform(-1.2, 1.2), rng.uniform(-0.8, 0.8)
    if kind == "box":
        size = (rng.uniform(0.2, 0.35), rng.uniform(0.2, 0.35), rng.uniform(0.7, 1.2), rng.uniform(0, np.pi / 2))
    elif kind == "cylinder":
        size = (rng.uniform(0.2, 0.35), rng.uniform(0.7, 1.2))
    else:
        size = (rng.uniform(0.3, 0.45),)
    return Solid(kind, (x, z), size, tuple(rng.uniform(0.25, 0.9, 3)))


def report_both(label: str, scenes) -> None:
    """Exact shadows and the classical detector on the same scenes, with the share of pairs (with a direction) that the
    round (ball) model explained."""
    for exact, source in ((True, "exact shadows"), (False, "detector")):
        shapes: list[str] = []
        errors = [error(scene, exact, shapes) for scene in scenes]
        share = f"  round model {shapes.count('round') / max(len(shapes), 1):4.0%} of pairs" if shapes else ""
        report(f"{label}, {source}", errors)
        if share:
            print(f"{'':34s}{share}")


def report(label: str, errors: list[float]) -> None:
    e = np.asarray(errors)
    print(f"{label:34s} {len(e):4d} scenes  median {np.median(e):5.1f}°  p75 {np.percentile(e, 75):5.1f}°  "
          f"p90 {np.percentile(e, 90):5.1f}°  no pair {int((e == 90).sum())}")


def main(parts: list[str]) -> None:
    if "anchors" in parts:
        report("16 anchors x 8, held-out seeds", [error(sample_scene(a.vector, seed=50000 + 1000 * k + s))
                                                  for k, a in enumerate(ANCHORS) for s in range(8)])
    if "random" in parts:
        rng = np.random.default_rng(123)
        directions = [(rng.uniform(-180, 180), rng.uniform(15, 65)) for _ in range(120)]
        report("random azimuth, elevation 15-65", [error(sample_scene(vector(*d), seed=70000 + i)) for i, d in enumerate(directions)])
    if "count" in parts:
        for n in range(1, 6):
            errors = []
            for i in range(40):
                rng = np.random.default_rng(110000 + 1000 * n + i)
                solids = random_solids(rng, n)
                light = vector(rng.uniform(-180, 180), rng.uniform(20, 55))
                errors.append(error(render(solids, light, pitch_deg=float(rng.uniform(25, 45)), seed=i)))
            report(f"{n} object(s)", errors)
    if "elevation" in parts:
        for el in (5, 10, 20, 35, 50, 65, 75, 85):
            report(f"elevation {el}", [error(sample_scene(vector(az, el), seed=90000 + 100 * el + 10 * i + s))
                                       for i, az in enumerate(range(-157, 180, 45)) for s in range(3)])
    if "kinds" in parts:
        rng = np.random.default_rng(5)
        for kind in ("box", "cylinder", "sphere"):
            per_anchor = []
            for anchor in ANCHORS:
                errors = []
                for _ in range(6):
                    size = {"box": (0.3, 0.3, 1.0, rng.uniform(0, 1.5)), "cylinder": (0.3, 1.0), "sphere": (0.4,)}[kind]
                    solid = Solid(kind, (rng.uniform(-1, 1), rng.uniform(-0.6, 0.6)), size, (0.7, 0.3, 0.3))
                    errors.append(error(render((solid,), anchor.vector, pitch_deg=35.0), exact=True))
                per_anchor.append(float(np.median(errors)))
            print(f"{kind:9s} alone, exact shadows: median over the anchors' medians {np.median(per_anchor):5.1f}°, "
                  f"worst anchor {max(per_anchor):5.1f}°")
    if "shapes" in parts:
        for k, kind in enumerate(("box", "cylinder", "sphere")):
            scenes = []
            for i in range(128):
                rng = np.random.default_rng(300000 + 1000 * k + i)
                light = ANCHORS[i % 16].vector if i < 64 else vector(rng.uniform(-180, 180), rng.uniform(15, 65))
                solid = one_solid(kind, rng)
                scenes.append(render((solid,), light, pitch_deg=float(rng.uniform(25, 45)), seed=i))
            report_both(f"{kind} alone", scenes)
        report_both("mixed 1-3 solids", [sample_scene(a.vector, seed=400000 + 1000 * k + s)
                                         for k, a in enumerate(ANCHORS) for s in range(8)])
    if "crowded" in parts:
        for n in (4, 5):
            scenes = []
            for i in range(100):
                rng = np.random.default_rng(700000 + 1000 * n + i)
                solids = random_solids(rng, n)
                light = vector(rng.uniform(-180, 180), rng.uniform(20, 55))
                scenes.append(render(solids, light, pitch_deg=float(rng.uniform(25, 45)), seed=i))
            report_both(f"{n} objects", scenes)


    if "pitch" in parts:
        split = TUNING if "--split" in parts and "tuning" in parts else VALIDATION
        crowded = CROWDED_TUNING if split is TUNING else CROWDED_VALIDATION
        for row in run_scenes(200, 0, split) + run_crowded(200, 0, crowded):
            print(f"{row.set:15s} {row.measure:32s} n={row.n:4d}  {row.value:7.3f}  goal {row.goal:6s}  {row.note}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["anchors", "random", "count", "elevation", "kinds"])
