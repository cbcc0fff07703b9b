"""GC's `copies` (duplicated structure) and `stretch` (stretched band) cues on the TUNING crops: what their
settings and scales were chosen on.

    python benchmarks/bench_gc_new_cues.py [N]

N crops (default 20) of the GC validity set's TUNING photos (vistar.validity.gc), each clean and corrupted once per
family as `vistar validate --angles GC` corrupts them, 256 px thumbnails, no PaDiM (`vistar validate` adds it).
Printed: each cue's CPU time per thumbnail (one thread, as the engine's workers run); the clean crops the `copies` cue flags, with the copied
region's offset; per family the ROC-AUC of each new cue alone (its raw value), of the minimum of the other image
cues (GC before), then with `copies` at several scales, then with `copies` at its ontology scale and `stretch` at
several scales.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):   # one core, as the engine's workers run
    os.environ[_var] = "1"

import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vistar.features.thumbnail import resize_longest  # noqa: E402
from vistar.metrics import gc_cues  # noqa: E402
from vistar.metrics.gc import cue_scores  # noqa: E402
from vistar.metrics.gc_copy import copy_move  # noqa: E402
from vistar.validity.gc import FAMILIES, _gc_params, crops, roc_auc  # noqa: E402

OTHERS = ("highlights", "contours", "texture")
COPY_SCALES = (0.001, 0.003, 0.01, 0.03)
BAND_SCALES = (0.5, 1.0, 1.5, 2.0)


def _measure(image: np.ndarray, params, clock: dict[str, float]) -> dict:
    small = np.ascontiguousarray(resize_longest(image, 256))
    scores = cue_scores(small, np.zeros(small.shape[:2], np.float32), None, params)
    p = params
    alone = {"copies": lambda: copy_move(small, p.copy_block, p.copy_blur, p.copy_min_residual, p.copy_max_coherence,
                                         p.copy_min_corr, p.copy_margin, p.copy_min_pairs),
             "stretch": lambda: gc_cues.stretched_band(small, p.band_frac)}
    for name, run in alone.items():     # timed again alone
        start = time.process_time()
        run()
        clock[name] = clock.get(name, 0.0) + time.process_time() - start
    return {"others": min(scores[c]["score"] for c in OTHERS), "copies": scores["copies"], "stretch": scores["stretch"]}


def _gc(m: dict, copy_scale: float, band_scale: float | None) -> float:
    cues = [m["others"], round(math.exp(-m["copies"]["value"] / copy_scale), 6)]
    if band_scale is not None:
        cues.append(round(math.exp(-m["stretch"]["value"] / band_scale), 6))
    return min(cues)


def main(n: int) -> None:
    cv2.setNumThreads(1)
    params = _gc_params()
    items = crops(n, 0, "tuning")
    clock: dict[str, float] = {}
    clean = [_measure(image, params, clock) for _, image in items]
    print(", ".join(f"{name}: {t / n:.3f} s CPU per 256 px thumbnail" for name, t in clock.items()) + f" ({n} tuning crops)")
    for (name, _), m in zip(items, clean):
        if m["copies"]["value"] > 0:
            print(f"  clean {name} flagged by copies: {m['copies']['value']:.4f} of the image, offset {m['copies']['offset']}")
    print(f"{'family':22s} | copies alone | stretch alone | GC before | + copies @ {', '.join(map(str, COPY_SCALES))} "
          f"| + copies @ {params.copy_scale} + stretch @ {', '.join(map(str, BAND_SCALES))}")
    for family, corrupt in FAMILIES.items():
        bad = [_measure(corrupt(image, np.random.default_rng([0, i])), params, {}) for i, (_, image) in enumerate(items)]

        def auc(score) -> str:
            return f"{roc_auc([score(m) for m in clean], [score(m) for m in bad]):.3f}"

        cells = [auc(lambda m: -m["copies"]["value"]), auc(lambda m: -m["stretch"]["value"]), auc(lambda m: m["others"])]
        cells.append(" ".join(auc(lambda m, s=s: _gc(m, s, None)) for s in COPY_SCALES))
        cells.append(" ".join(auc(lambda m, s=s: _gc(m, params.copy_scale, s)) for s in BAND_SCALES))
        print(f"{family:22s} | " + " | ".join(cells))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
