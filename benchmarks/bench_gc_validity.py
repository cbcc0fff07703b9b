"""GC validity: does a corrupted image score lower than the clean one, cue by cue?

    python benchmarks/bench_gc_validity.py

Image cues (highlights, contours, texture) on 10 real photos (scikit-image's astronaut, camera, coffee,
chelsea, rocket, motorcycle (both stereo views), brick, grass, coins: GC's tuning photos only), each clean and
corrupted ten ways (Gaussian noise σ 15/30, smooth random warps of 4/10 px, its 4x4/8x8 blocks shuffled, one quarter-size tile
repeated over it, JPEG quality 10, a swirl, rows of 8 bands shifted ±6 px). Depth cues (normals, curvature) on
40 ray-cast scenes (vistar.synth.scenes, exact inverse depth) against the same depth with 2 % noise, a 4 px warp,
shuffled 4x4 blocks, shifted bands and 8 px blocks. No depth model is needed. Printed: for each corruption, in how
many images each cue and the minimum of the image cues went down (strictly), and up. GC's ROC-AUC per corruption
family on 80 photo crops is `vistar validate --angles GC` (docs/validity.md).
"""
from __future__ import annotations

import io

import cv2
import numpy as np
from PIL import Image
from skimage import data, transform

from vistar.engine.params import metric_params
from vistar.features.thumbnail import resize_longest
from vistar.metrics.gc import cue_scores
from vistar.ontology import Ontology
from vistar.synth.scenes import scene_pair

IMAGE_CUES = ("highlights", "contours", "texture")


def photos() -> dict[str, np.ndarray]:
    grey = lambda a: np.stack([a] * 3, -1)  # noqa: E731
    left, right = data.stereo_motorcycle()[:2]
    return {"astronaut": data.astronaut(), "motorcycle_right": right, "camera": grey(data.camera()), "coffee": data.coffee(),
            "chelsea": data.chelsea(), "rocket": data.rocket(), "motorcycle": left,
            "brick": grey(data.brick()), "grass": grey(data.grass()), "coins": grey(data.coins())}


def warp(image, amplitude, rng, cell=24):
    h, w = image.shape[:2]
    field = lambda: cv2.resize(rng.normal(0, 1, (h // cell + 2, w // cell + 2)).astype(np.float32), (w, h),  # noqa: E731
                               interpolation=cv2.INTER_CUBIC) * amplitude
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    return cv2.remap(image, xx + field(), yy + field(), cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def shuffle(image, k, rng):
    h, w = image.shape[:2]
    bh, bw = h // k, w // k
    blocks = [image[i * bh:(i + 1) * bh, j * bw:(j + 1) * bw] for i in range(k) for j in range(k)]
    order = rng.permutation(len(blocks))
    return np.concatenate([np.concatenate([blocks[order[i * k + j]] for j in range(k)], 1) for i in range(k)], 0)


def repeat_tile(image, frac=0.25):
    h, w = image.shape[:2]
    th, tw = int(h * frac), int(w * frac)
    tile = image[h // 3:h // 3 + th, w // 3:w // 3 + tw]
    return np.tile(tile, (h // th + 1, w // tw + 1) + (1,) * (image.ndim - 2))[:h, :w]


def shifted_bands(image, k=8, shift=6):
    out = image.copy()
    band = image.shape[0] // k
    for i in range(0, image.shape[0], band):
        out[i:i + band] = np.roll(out[i:i + band], shift if (i // band) % 2 else -shift, axis=1)
    return out


def jpeg(image, quality=10):
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "JPEG", quality=quality)
    return np.asarray(Image.open(buffer).convert("RGB"))


def image_cue_scores(image, params):
    small = np.ascontiguousarray(resize_longest(np.ascontiguousarray(image), 256))
    depth = np.zeros(small.shape[:2], np.float32)
    return {k: v["score"] for k, v in cue_scores(small, depth, None, params).items() if k in IMAGE_CUES}


def main() -> None:
    params = metric_params(Ontology.load(), "GC")
    rng = np.random.default_rng(0)
    corruptions = {
        "noise σ15": lambda im: np.clip(im + rng.normal(0, 15, im.shape), 0, 255).astype(np.uint8),
        "noise σ30": lambda im: np.clip(im + rng.normal(0, 30, im.shape), 0, 255).astype(np.uint8),
        "warp 4 px": lambda im: warp(im, 4, rng), "warp 10 px": lambda im: warp(im, 10, rng),
        "shuffled 4x4": lambda im: shuffle(im, 4, rng), "shuffled 8x8": lambda im: shuffle(im, 8, rng),
        "repeated tile": repeat_tile, "JPEG q10": jpeg,
        "swirl": lambda im: (transform.swirl(im, strength=4, radius=min(im.shape[:2]) / 2) * 255).astype(np.uint8),
        "shifted bands": shifted_bands,
    }
    images = photos()
    clean = {name: image_cue_scores(im, params) for name, im in images.items()}
    print("clean photos, image cues:", ", ".join(f"{n} " + "/".join(f"{s[c]:.2f}" for c in IMAGE_CUES) for n, s in clean.items()))
    print(f"\n{'corruption':15s} " + " ".join(f"{c + ' down/up':>16s}" for c in IMAGE_CUES) + f" {'min down/up':>12s}   (of {len(images)})")
    for name, corrupt in corruptions.items():
        down, up = dict.fromkeys(IMAGE_CUES + ("min",), 0), dict.fromkeys(IMAGE_CUES + ("min",), 0)
        for photo, image in images.items():
            scores = image_cue_scores(corrupt(np.ascontiguousarray(image)), params)
            base = clean[photo]
            for cue in IMAGE_CUES:
                down[cue] += scores[cue] < base[cue]
                up[cue] += scores[cue] > base[cue]
            down["min"] += min(scores.values()) < min(base.values())
            up["min"] += min(scores.values()) > min(base.values())
        print(f"{name:15s} " + " ".join(f"{down[c]:>11d}/{up[c]:<4d}" for c in IMAGE_CUES) + f" {down['min']:>7d}/{up['min']:<4d}")

    depth_corruptions = {
        "noise 2 %": lambda d: d * (1 + 0.02 * rng.standard_normal(d.shape)).astype(np.float32),
        "warp 4 px": lambda d: warp(d, 4, rng), "shuffled 4x4": lambda d: shuffle(d, 4, rng),
        "shifted bands": shifted_bands,
        "8 px blocks": lambda d: cv2.resize(cv2.resize(d, (d.shape[1] // 8, d.shape[0] // 8), interpolation=cv2.INTER_AREA),
                                            (d.shape[1], d.shape[0]), interpolation=cv2.INTER_NEAREST),
    }
    scenes = [scene_pair(seed, 192, 256)[seed % 2] for seed in range(40, 80)]
    base = [cue_scores(s.image, s.inverse_depth, None, params) for s in scenes]
    print(f"\n{'depth corruption':15s} {'normals down':>13s} {'curvature down':>15s}   (of {len(scenes)} scenes, exact depth)")
    for name, corrupt in depth_corruptions.items():
        down = {"normals": 0, "curvature": 0}
        for scene, b in zip(scenes, base):
            scores = cue_scores(scene.image, np.ascontiguousarray(corrupt(scene.inverse_depth.copy()), np.float32), None, params)
            for cue in down:
                down[cue] += scores[cue]["score"] < b[cue]["score"]
        print(f"{name:15s} {down['normals']:13d} {down['curvature']:15d}")


if __name__ == "__main__":
    main()
