"""GC's `copies` cue (duplicated structure) on the TUNING crops: what its settings and scale were chosen on.

    python benchmarks/bench_gc_copies.py [N] [SCALE ...]

N crops (default 20) of the GC validity set's TUNING photos (vistar.validity.gc), each clean and corrupted once per
family as `vistar validate --angles GC` corrupts them, 256 px thumbnails. Printed: the cue's time per thumbnail on
one core; per family the ROC-AUC of the cue alone (its raw value), of the minimum of the other image cues, and of
that minimum with the `copies` cue at each SCALE (default 0.001 0.003 0.01 0.03); the clean crops the cue flags, with the
copied region's offset. No PaDiM (GC's ranking without it; `vistar validate` adds it).
"""
from __future__ import annotations

import sys
import time

import cv2
import numpy as np

from vistar.features.thumbnail import resize_longest
from vistar.metrics import gc_cues
from vistar.metrics.gc import cue_scores
from vistar.metrics.gc_copy import copy_move
from vistar.validity.gc import FAMILIES, _gc_params, crops, roc_auc

OTHERS = ("highlights", "contours", "texture")


def _thumb(image: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(resize_longest(image, 256))


def _measure(small: np.ndarray, params) -> tuple[float, float, dict]:
    """(min of the other image cues, the copies cue's raw value, its details)."""
    scores = cue_scores(small, np.zeros(small.shape[:2], np.float32), None, params)
    return min(scores[c]["score"] for c in OTHERS), scores["copies"]["value"], scores["copies"]


def main(n: int, scales: list[float]) -> None:
    cv2.setNumThreads(1)
    params = _gc_params()
    args = (params.copy_block, params.copy_blur, params.copy_min_residual, params.copy_max_coherence,
            params.copy_min_corr, params.copy_margin, params.copy_min_pairs)
    items = crops(n, 0, "tuning")
    thumbs = [_thumb(image) for _, image in items]
    start = time.process_time()
    for small in thumbs:
        copy_move(small, *args)
    print(f"copies cue: {(time.process_time() - start) / n:.3f} s CPU per 256 px thumbnail ({n} tuning crops)")
    clean = [_measure(small, params) for small in thumbs]
    for (name, _), (_, value, details) in zip(items, clean):
        if value > 0:
            print(f"  clean {name} flagged: {value:.4f} of the image, offset {details['offset']}, "
                  f"{details['matches']} matches")
    header = " | ".join(f"with copies @{s}" for s in scales)
    print(f"{'family':22s} | copies alone | other image cues | {header}")
    for family, corrupt in FAMILIES.items():
        bad = [_measure(_thumb(corrupt(image, np.random.default_rng([0, i]))), params)
               for i, (_, image) in enumerate(items)]
        cells = [roc_auc([-c[1] for c in clean], [-b[1] for b in bad]), roc_auc([c[0] for c in clean], [b[0] for b in bad])]
        for scale in scales:
            def gc(m: tuple[float, float, dict], scale: float = scale) -> float:
                return min(m[0], round(gc_cues.to_score(m[1], scale), 6))
            cells.append(roc_auc([gc(c) for c in clean], [gc(b) for b in bad]))
        print(f"{family:22s} | " + " | ".join(f"{c:.3f}" for c in cells))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20,
         [float(s) for s in sys.argv[2:]] or [0.001, 0.003, 0.01, 0.03])
