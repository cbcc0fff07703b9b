"""PSC ranking on held-out generated scenes: other seeds, image sizes and camera elevations.

    python benchmarks/bench_psc_validity.py            # ranking of the scene pairs
    python benchmarks/bench_psc_validity.py ball [--split tuning]   # ball or cube at a block's face and on its top

For each seed, vistar.synth.scenes builds a penetrating and a non-penetrating scene of the same two solids;
PSC must score the non-penetrating one strictly higher. Seeds 20000+ (the tests use 0-119), ground-truth
features or model-like ones (imperfect_features: depth blurred 1.5 px, masks ±1 px); image sizes 96x128 (the
generator's default) to 384x512, square and portrait; camera elevations 10°-45° (the generator draws 18°-32°).
`ball`: vistar.validity.psc, a ball and a cube, 60 layouts x 3 placements each at a block's front face (sunk,
resting, floating) and 60 x 2 on its top face (sunk, resting), the ball also on a long top, ROC-AUC of sunk vs
the rest. `ball --old-long-draw`: the ball on a long top alone, on version 6's validation draw (seeds 11 000 000+,
redrawn for version 7); `ball --old-cube-top-draw`: the cube on a top alone, on version 9's draw (seeds
9 000 000+, redrawn for version 10 at 15 000 000+).
"""
from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

from vistar.engine.params import metric_params
from vistar.metrics.psc import METRIC
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt
from vistar.synth.scenes import imperfect_features, scene_pair
from vistar.validity.psc import OLD_CUBE_TOP_DRAW, OLD_LONG_DRAW, SETS, TUNING, VALIDATION, run_ball_long_top, run_cube_top

FAMILIES = ("sphere/box", "two spheres", "box/cylinder", "two boxes")


def ranked(label: str, seeds, size=(96, 128), elevation=None, blur=0.0, mask_px=0) -> None:
    params, prompt = metric_params(Ontology.load(), "PSC"), parse_prompt("[PH|PSC] two objects")
    rng = np.random.default_rng(1)
    wins = {f: [0, 0] for f in FAMILIES}
    for seed in seeds:
        pair = scene_pair(seed, *size, elevation_deg=elevation)
        feats = [(s.instances, s.inverse_depth) if not (blur or mask_px) else imperfect_features(s, rng, blur, mask_px) for s in pair]
        pen, clean = (METRIC.fn({"instances": i, "depth": d}, {}, params, prompt).score for i, d in feats)
        family = wins[FAMILIES[seed % 4]]
        family[0] += clean > pen
        family[1] += 1
    total = sum(w for w, _ in wins.values()) / len(seeds)
    print(f"{label:40s} {len(seeds):4d} pairs  ranked {total:6.1%}   " + "  ".join(f"{f} {w / n:.0%}" for f, (w, n) in wins.items()))


def main() -> None:
    held = range(20000, 20400)
    ranked("ground truth, 96x128", held)
    ranked("model-like (blur 1.5, masks ±1), 96x128", held, blur=1.5, mask_px=1)
    for size in ((192, 256), (384, 512), (96, 96), (128, 96)):
        ranked(f"ground truth, {size[0]}x{size[1]}", range(20000, 20200), size)
    ranked("model-like, 192x256", range(20000, 20200), (192, 256), blur=1.5, mask_px=1)
    for elevation in (10, 15, 35, 45):
        ranked(f"ground truth, camera elevation {elevation}°", range(20000, 20200), elevation=elevation)


if __name__ == "__main__":
    if "--old-long-draw" in sys.argv[1:]:
        for row in run_ball_long_top(60, 0, replace(VALIDATION, long_seed_offset=OLD_LONG_DRAW)):
            print(f"{row.set:22s} {row.measure:32s} n={row.n:4d}  {row.value:.3f}  goal {row.goal}")
    elif "--old-cube-top-draw" in sys.argv[1:]:
        for row in run_cube_top(60, 0, replace(VALIDATION, cube_top_seed_offset=OLD_CUBE_TOP_DRAW)):
            print(f"{row.set:22s} {row.measure:32s} n={row.n:4d}  {row.value:.3f}  goal {row.goal}")
    elif "ball" in sys.argv[1:]:
        for row in (r for run in SETS.values() for r in run(60, 0, TUNING if "tuning" in sys.argv[1:] else VALIDATION)):
            print(f"{row.set:22s} {row.measure:32s} n={row.n:4d}  {row.value:.3f}  goal {row.goal}  {row.note}")
    else:
        main()
