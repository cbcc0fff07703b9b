"""GC validity: does GC rank a corrupted real photograph below the clean one, per corruption family?

Items are crops of real photographs shipped with scikit-image and matplotlib (no download), each scored clean and
corrupted once per family at the crop's own resolution, then shrunk to the thumbnail as the `thumbnail` stage
does. The measure is ROC-AUC: the probability that a corrupted crop scores below a clean one (ties count half),
over all clean × corrupted pairs of the family. Depth models cannot be run without their weights, so depth is
flat (the depth cues score 1) and GC here is the minimum of its image cues; PaDiM has no statistics by default.

The parameter ranges below were fixed before measuring and differ from those of benchmarks/bench_gc_validity.py.
"""
from __future__ import annotations

from functools import lru_cache, partial

import cv2
import numpy as np

from ..features.thumbnail import resize_longest
from ..metrics.gc import GCParams, cue_scores
from . import ValidityRow

GOAL = 0.80
PHOTOS = ("astronaut", "brick", "camera", "cell", "chelsea", "clock", "coffee", "coins", "grass", "gravel",
          "hubble_deep_field", "immunohistochemistry", "moon", "page", "retina", "rocket", "text", "grace_hopper",
          "motorcycle_left", "motorcycle_right")


def _rgb(array) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype != np.uint8:
        array = (255 * (array - array.min()) / max(1e-9, float(array.max() - array.min()))).astype(np.uint8)
    return np.ascontiguousarray(np.stack([array] * 3, -1) if array.ndim == 2 else array[..., :3])


@lru_cache(maxsize=1)
def photos() -> dict[str, np.ndarray]:
    """The 20 photographs, RGB uint8, loaded once (from scikit-image and matplotlib, core dependencies)."""
    from PIL import Image
    from skimage import data

    from ..synth.text import matplotlib_data

    left, right = data.stereo_motorcycle()[:2]
    special = {"grace_hopper": lambda: Image.open(matplotlib_data("sample_data", "grace_hopper.jpg")).convert("RGB"),
               "motorcycle_left": lambda: left, "motorcycle_right": lambda: right}
    return {name: _rgb(special[name]() if name in special else getattr(data, name)()) for name in PHOTOS}


def _feathered_blend(image: np.ndarray, other: np.ndarray, mask: np.ndarray, feather_px: int) -> np.ndarray:
    k = 2 * max(1, feather_px) + 1
    alpha = cv2.GaussianBlur(mask.astype(np.float32), (k, k), max(1, feather_px) / 2)[..., None]
    return np.clip(image.astype(np.float32) * (1 - alpha) + other.astype(np.float32) * alpha, 0, 255).astype(np.uint8)


def patch_seams(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Half the time a rectangle (15–30 % of each side) pasted from elsewhere in the image with hard edges, else
    the image cut along one horizontal or vertical line and one side shifted 1–4 % along it."""
    h, w = image.shape[:2]
    out = image.copy()
    if rng.random() < 0.5:
        rh, rw = int(h * rng.uniform(0.15, 0.3)), int(w * rng.uniform(0.15, 0.3))
        y, x = rng.integers(0, h - rh + 1), rng.integers(0, w - rw + 1)
        sy, sx = (y + (h - rh + 1) // 2) % (h - rh + 1), (x + (w - rw + 1) // 2) % (w - rw + 1)  # half a range away
        out[y:y + rh, x:x + rw] = image[sy:sy + rh, sx:sx + rw]
        return out
    axis = int(rng.integers(0, 2))
    size = image.shape[1 - axis]
    cut = int(rng.integers(image.shape[axis] // 5, 4 * image.shape[axis] // 5))
    shift = max(1, int(size * rng.uniform(0.01, 0.04))) * int(rng.choice([-1, 1]))
    index = [slice(None), slice(None)]
    index[axis] = slice(cut, None)
    out[tuple(index)] = np.roll(image[tuple(index)], shift, axis=1 - axis)
    return out


def warped_geometry(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A smooth random displacement field: 4–8 control points per side, amplitude 0.4–1 % of the longest side."""
    h, w = image.shape[:2]
    cells, amplitude = int(rng.integers(4, 9)), max(h, w) * rng.uniform(0.004, 0.01)
    field = [cv2.resize(rng.normal(0, 1, (cells, cells)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
             * amplitude for _ in range(2)]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    return cv2.remap(image, xx + field[0], yy + field[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def duplicated_structure(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A square (10–20 % of the shorter side) copied to a non-overlapping place, gain 0.9–1.1, noise σ 2, with a
    feathered edge so that no seam gives it away."""
    h, w = image.shape[:2]
    side = max(8, int(min(h, w) * rng.uniform(0.1, 0.2)))
    y, x = rng.integers(0, h - side + 1), rng.integers(0, w - side + 1)
    ty, tx = y, x
    for _ in range(100):
        ty, tx = rng.integers(0, h - side + 1), rng.integers(0, w - side + 1)
        if abs(ty - y) >= side or abs(tx - x) >= side:
            break
    patch = image[y:y + side, x:x + side].astype(np.float32) * rng.uniform(0.9, 1.1)
    other = image.astype(np.float32)
    other[ty:ty + side, tx:tx + side] = patch + rng.normal(0, 2.0, patch.shape)
    mask = np.zeros((h, w), np.float32)
    feather = max(1, side // 8)
    mask[ty + feather:ty + side - feather, tx + feather:tx + side - feather] = 1
    return _feathered_blend(image, other, mask, feather)


def texture_smearing(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An ellipse (15–30 % of each side) smeared by a straight motion blur 1.6–4 % of the longest side long."""
    h, w = image.shape[:2]
    ry, rx = max(2, int(h * rng.uniform(0.15, 0.3) / 2)), max(2, int(w * rng.uniform(0.15, 0.3) / 2))
    cy, cx = int(rng.integers(ry, h - ry + 1)), int(rng.integers(rx, w - rx + 1))
    mask = np.zeros((h, w), np.uint8)
    cv2.ellipse(mask, (cx, cy), (rx, ry), float(rng.uniform(0, 180)), 0, 360, 1, -1)
    length = max(3, int(max(h, w) * rng.uniform(0.016, 0.04)))
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2] = 1
    turn = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), float(rng.uniform(0, 180)), 1)
    kernel = cv2.warpAffine(kernel, turn, (length, length))
    smeared = cv2.filter2D(image, -1, kernel / kernel.sum())
    return _feathered_blend(image, smeared, mask, max(1, min(rx, ry) // 6))


FAMILIES = {"patch seams": patch_seams, "warped geometry": warped_geometry,
            "duplicated structure": duplicated_structure, "texture smearing": texture_smearing}


def crops(n: int, seed: int, side: int = 700) -> list[tuple[str, np.ndarray]]:
    """N crops (60–100 % of the shorter side, aspect 1–1.4, at most SIDE px tall), photos taken in turn."""
    pictures = photos()
    names = sorted(pictures)
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        name = names[i % len(names)]
        image = pictures[name]
        h, w = image.shape[:2]
        ch = min(side, int(min(h, w) * rng.uniform(0.6, 1.0)))
        cw = min(w, int(ch * rng.uniform(1.0, 1.4)))
        y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        out.append((name, image[y:y + ch, x:x + cw].copy()))
    return out


def gc_score(image: np.ndarray, params: GCParams, side: int = 256) -> float:
    """GC as the metric computes it from the thumbnail, with flat depth and no PaDiM statistics."""
    small = np.ascontiguousarray(resize_longest(image, side))
    return min(c["score"] for c in cue_scores(small, np.zeros(small.shape[:2], np.float32), None, params).values())


def roc_auc(clean: list[float], corrupted: list[float]) -> float:
    """P(corrupted scores below clean), ties half: 1 = perfect, 0.5 = chance."""
    c, k = np.asarray(clean, float)[:, None], np.asarray(corrupted, float)[None, :]
    return float(((k < c) + 0.5 * (k == c)).mean())


def _family_auc(family: str, n: int, seed: int) -> list[ValidityRow]:
    from ..engine.params import metric_params
    from ..ontology import Ontology
    params = metric_params(Ontology.load(), "GC")
    items = crops(n, seed)
    corrupt = FAMILIES[family]
    clean = [gc_score(image, params) for _, image in items]
    bad = [gc_score(corrupt(image, np.random.default_rng([seed, i])), params) for i, (_, image) in enumerate(items)]
    auc = roc_auc(clean, bad)
    met = auc >= GOAL
    note = ("" if met else "shortfall: the image cues do not target this corruption; GC is experimental, weight 0 "
            "in role totals by default (docs/metrics/gc.md)")
    return [ValidityRow("GC", family, n, "ROC-AUC vs clean", round(auc, 3), f">= {GOAL:.2f}", met, note)]


SETS = {family: partial(_family_auc, family) for family in FAMILIES}
FULL_N = dict.fromkeys(FAMILIES, 80)  # four crops of each of the 20 photos
