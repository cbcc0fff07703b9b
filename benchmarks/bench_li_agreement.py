"""LI: does a minimum agreement (the joint fit's IoU with the detected shadows) before a fit is scored help?

    python benchmarks/bench_li_agreement.py [--n 200]

On LI's two tuning splits only (vistar.validity.li TUNING and CROWDED_TUNING, the sets LI's choices are made
on), per scene: the joint fit's angular error, its IoU and near-best spread (details.fit), and the error of the
per-pair fallback (the normalised coordinate-wise median of the pairs' own directions, clean pairs if any).
Prints the IoU and spread of scenes whose fit is good (error < 10°) against bad (> 20°), then the grid:
for each minimum IoU (and maximum spread), median / p90 error of the scored scenes and the share scored, when
a fit below it is skipped and when the per-pair median replaces it. Scenes with no pair and the frontal
low-confidence ones are unscored throughout, as in `vistar validate`.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import replace

import numpy as np

from vistar.engine.params import metric_params
from vistar.features.shadows_classical import ClassicalShadowDetector
from vistar.features.thumbnail import resize_longest
from vistar.metrics.li import read_light
from vistar.metrics.light_geometry import angle_between
from vistar.ontology import Ontology
from vistar.validity.li import CROWDED_TUNING, TUNING, Split, sample

IOUS = (0.0, 0.1, 0.2, 0.22, 0.25, 0.28, 0.3, 0.33, 0.35, 0.4)
SPREADS = (math.inf, 20.0, 15.0, 10.0)


def pair_median(pairs: list[dict]) -> np.ndarray | None:
    """The per-pair fallback: clean pairs' directions if any, else every pair's; coordinate-wise median."""
    with_dir = [p for p in pairs if "vector" in p]
    clean = [p for p in with_dir if p["tier"] == "clean"] or with_dir
    if not clean:
        return None
    v = np.median(np.array([p["vector"] for p in clean]), axis=0)
    return v / np.linalg.norm(v) if np.linalg.norm(v) > 0 else None


def records(split: Split, n: int) -> list[dict]:
    """One record per scene that the fit reads and does not call frontal (the scenes `vistar validate` scores)."""
    params = replace(metric_params(Ontology.load(), "LI"), min_fit_iou=0.0)   # every fit, the grid applies the minimum
    detector = ClassicalShadowDetector()
    out = []
    for i in range(n):
        scene, _ = sample(split, i)
        reading = read_light(scene.instances, detector(scene.image, scene.instances), params,
                             resize_longest(scene.image, 256))
        if reading.vector is None or reading.doubt is not None or reading.fit is None:
            continue
        fallback = pair_median(reading.pairs)
        out.append({"error": math.degrees(angle_between(reading.vector, scene.light)),
                    "iou": reading.fit["iou"], "spread": reading.fit["near_best_spread_deg"],
                    "fallback": None if fallback is None else math.degrees(angle_between(fallback, scene.light))})
    return out


def summary(errors: list[float], n: int) -> str:
    if not errors:
        return "   nothing scored   "
    return f"{np.median(errors):5.2f} {np.percentile(errors, 90):5.1f} {len(errors) / n:6.3f}"


def distribution(label: str, recs: list[dict]) -> None:
    for name, pick in (("error < 10°", lambda e: e < 10), ("error > 20°", lambda e: e > 20)):
        sel = [r for r in recs if pick(r["error"])]
        if not sel:
            print(f"{label:8s} {name}: none")
            continue
        iou = np.percentile([r["iou"] for r in sel], [10, 25, 50, 75])
        spread = np.percentile([r["spread"] for r in sel], [25, 50, 75, 90])
        print(f"{label:8s} {name}: {len(sel):3d} scenes  IoU p10/p25/p50/p75 {' / '.join(f'{v:.2f}' for v in iou)}"
              f"  spread p25/p50/p75/p90 {' / '.join(f'{v:.0f}°' for v in spread)}")


def grid(label: str, recs: list[dict], n: int) -> None:
    print(f"\n{label}: minimum IoU x maximum spread -> median p90 share, skip | per-pair fallback")
    for spread in SPREADS:
        for iou in IOUS:
            ok = [r for r in recs if r["iou"] >= iou and r["spread"] <= spread]
            low = [r for r in recs if not (r["iou"] >= iou and r["spread"] <= spread)]
            fallback = [r["error"] for r in ok] + [r["fallback"] for r in low if r["fallback"] is not None]
            print(f"  IoU >= {iou:4.2f} spread <= {spread:4.0f}°  skip {summary([r['error'] for r in ok], n)}"
                  f"  ({len(low):3d} low) | fallback {summary(fallback, n)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="scenes per tuning split")
    n = parser.parse_args().n
    for label, split in (("tuning", TUNING), ("crowded", CROWDED_TUNING)):
        recs = records(split, n)
        distribution(label, recs)
        grid(label, recs, n)


if __name__ == "__main__":
    main()
