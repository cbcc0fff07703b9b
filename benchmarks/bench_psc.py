"""PSC: validity on generated scenes and the speed of the chaos pair kernels. Prints numbers; asserts nothing.

    python benchmarks/bench_psc.py [--seeds 400] [--size 512] [--instances 12] [--repeats 5] [--triton]

Validity: for each seed, a penetrating and a non-penetrating scene of the same two solids
(vistar.synth.scenes) are scored with ground-truth inverse depth and visible masks; reported per layout
family: how often the non-penetrating scene scores strictly higher, and the median chaos of each kind.
Then the same with model-like features (vistar.synth.scenes.imperfect_features): depth blurred by a
Gaussian of 1.5 px and every mask grown or shrunk by 1 px, then by 2 px.
Speed: `pair_stats` on a SIZE×SIZE image with INSTANCES random overlapping blobs (all pairs) with the
default band, per backend; median CPU seconds of REPEATS runs after one warm-up (numba compile excluded).
--triton also times the Triton kernels (needs a CUDA GPU; wall time after synchronise).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from vistar.engine.params import metric_params
from vistar.kernels.chaos import pair_stats_numba, pair_stats_ref, pair_stats_triton
from vistar.metrics.psc import METRIC, contact_radii
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt
from vistar.synth.scenes import imperfect_features, scene_pair

FAMILIES = ("sphere sunk in box / touching its front", "two spheres / occluding", "box through cylinder / touching",
            "two boxes fused / occluding")


def validity(seeds: int, blur_px: float, mask_px: int) -> None:
    params = metric_params(Ontology.load(), "PSC")
    prompt = parse_prompt("[PH|PSC] two objects")
    rows = {f: {"wins": 0, "n": 0, "pen": [], "clean": []} for f in FAMILIES}
    rng = np.random.default_rng(0)
    print(f"\nfeatures: {'ground truth' if not (blur_px or mask_px) else f'depth blur {blur_px}px, mask error {mask_px}px'}")
    for seed in range(seeds):
        family = rows[FAMILIES[seed % len(FAMILIES)]]
        feats = [imperfect_features(s, rng, blur_px, mask_px) for s in scene_pair(seed)]
        results = [METRIC.fn({"instances": inst, "depth": depth}, {}, params, prompt) for inst, depth in feats]
        family["n"] += 1
        family["wins"] += results[1].score > results[0].score
        for key, res in zip(("pen", "clean"), results):
            if res.details.get("worst"):
                family[key].append(res.details["worst"]["chaos"])
    print(f"{'family':44s} {'pairs':>5s} {'ranked':>7s} {'C pen':>7s} {'C clean':>8s}")
    total = sum(r["wins"] for r in rows.values())
    for name, r in rows.items():
        med = lambda xs: f"{statistics.median(xs):.3f}" if xs else "-"  # noqa: E731
        print(f"{name:44s} {r['n']:5d} {r['wins'] / max(r['n'], 1):7.1%} {med(r['pen']):>7s} {med(r['clean']):>8s}")
    print(f"{'all':44s} {seeds:5d} {total / seeds:7.1%}")


def _blobs(size: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size]
    masks = np.stack([((yy - rng.uniform(0, size)) ** 2 + (xx - rng.uniform(0, size)) ** 2) < rng.uniform(0.1, 0.3) ** 2 * size ** 2
                      for _ in range(n)])
    depth = rng.random((size, size)).astype(np.float32)
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    return masks, depth, pairs


def _median_cpu_s(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def speed(size: int, instances: int, repeats: int, triton: bool) -> None:
    params = metric_params(Ontology.load(), "PSC")
    touch, band = contact_radii(size, size, params)
    masks, depth, pairs = _blobs(size, instances)
    args = (masks, depth, pairs, touch, band)
    print(f"\n{len(pairs)} pairs on {size}x{size}, band {band}px")
    for name, fn in (("numpy reference", pair_stats_ref), ("numba (all cores)", pair_stats_numba)):
        print(f"{name:20s} {_median_cpu_s(lambda: fn(*args), repeats) * 1000:9.1f} ms CPU")
    if triton:
        import torch

        pair_stats_triton(*args)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(repeats):
            pair_stats_triton(*args)
        torch.cuda.synchronize()
        print(f"{'triton (GPU)':20s} {(time.perf_counter() - start) / repeats * 1000:9.1f} ms wall")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=400)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--instances", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--triton", action="store_true")
    cli = parser.parse_args()
    validity(cli.seeds, 0.0, 0)
    validity(cli.seeds, 1.5, 1)
    validity(cli.seeds, 1.5, 2)
    speed(cli.size, cli.instances, cli.repeats, cli.triton)
