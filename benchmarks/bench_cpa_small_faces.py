"""CPA face detection: recall by face size, false faces on face-free photos, and cost, with and without the tile pass.

    python benchmarks/bench_cpa_small_faces.py [--sides 256 384 512 768 1024 1536] [--tiles 4] [--tile-overlap 0.25]
                                               [--tile-min-side 64] [--max-tiles 40]
                                               [--verify-context 5] [--verify-score 0.65]

Crowds: the six portraits of the validity benchmark (scikit-image's astronaut and camera, matplotlib's
grace_hopper, and their mirror images) pasted into a square image of each side, scaled so that every face box
(as the detector finds it on the full-size photo) is 2-10 % of the image side, up to 4 x 4 per image at jittered
grid positions, on four backgrounds (grey, tiled scikit-image grass and gravel, coffee stretched to the square).
A ground-truth face is found when a detection's centre is inside it and its centre inside the detection.
Face-free: 17 scikit-image photos without people (coffee, chelsea, rocket, brick, grass, gravel,
hubble_deep_field, page, coins, moon, clock, text, immunohistochemistry, retina, colorwheel, horse, logo) scaled to
each side, their 90-degree rotations, and 2 x 2 mosaics; every detection there is false.
Both configurations run on the same images: `before` is the detector without the tile pass (tiles 0),
`after` the one given by the options (defaults: the ontology's). Time: wall ms per image, one image at a time.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from matplotlib import cbook
from PIL import Image
from skimage import data

from vistar.features.faces import MediaPipeFaceDetector
from vistar.ontology import Ontology

FRACTIONS = (0.02, 0.025, 0.03, 0.035, 0.04, 0.05, 0.06, 0.08, 0.10)
FREE = ("coffee", "chelsea", "rocket", "brick", "grass", "gravel", "hubble_deep_field", "page", "coins", "moon",
        "clock", "text", "immunohistochemistry", "retina", "colorwheel", "horse", "logo")


def rgb(a) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == bool:
        a = a.astype(np.uint8) * 255
    if a.ndim == 2:
        a = np.stack([a] * 3, -1)
    return np.ascontiguousarray(a[..., :3])


def resize(a: np.ndarray, width: float, height: float) -> np.ndarray:
    return np.asarray(Image.fromarray(a).resize((max(1, round(width)), max(1, round(height))), Image.LANCZOS))


def portraits() -> list[tuple[np.ndarray, tuple[float, float, float, float]]]:
    """The six portraits with their face boxes, found once by the detector on the full-size photos."""
    hopper = np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB"))
    detector = MediaPipeFaceDetector(tiles=0)
    out = []
    for image in (data.astronaut(), hopper, rgb(data.camera())):
        (face,) = detector(image)
        x0, y0, x1, y1 = face.box
        width = image.shape[1]
        out += [(image, face.box), (np.ascontiguousarray(image[:, ::-1]), (width - x1, y0, width - x0, y1))]
    return out


def backgrounds(side: int) -> dict[str, np.ndarray]:
    def tile(a):
        return np.tile(rgb(a), (side // 512 + 1, side // 512 + 1, 1))[:side, :side]

    return {"grey": np.full((side, side, 3), 200, np.uint8), "grass": tile(data.grass()),
            "gravel": tile(data.gravel()), "coffee": resize(data.coffee(), side, side)}


def crowd(side: int, fraction: float, background: np.ndarray, people, seed: int, per_side: int = 4):
    """People pasted on BACKGROUND so that every face box is FRACTION of SIDE wide; the image and the face boxes."""
    rng = np.random.default_rng(seed)
    scaled = []
    for image, box in people:
        s = fraction * side / (box[2] - box[0])
        scaled.append((resize(image, image.shape[1] * s, image.shape[0] * s), tuple(v * s for v in box)))
    n = min(per_side, side // (max(max(p.shape[:2]) for p, _ in scaled) + 2))
    canvas, boxes = background.copy(), []
    if n == 0:
        return canvas, boxes
    pitch, k = side / n, int(rng.integers(len(scaled)))
    for gy in range(n):
        for gx in range(n):
            person, box = scaled[k % len(scaled)]
            k += 1
            h, w = person.shape[:2]
            x = int(gx * pitch + rng.uniform(0, max(0.0, pitch - w)))
            y = int(gy * pitch + rng.uniform(0, max(0.0, pitch - h)))
            canvas[y:y + h, x:x + w] = person
            boxes.append((box[0] + x, box[1] + y, box[2] + x, box[3] + y))
    return canvas, boxes


def face_free(side: int) -> dict[str, np.ndarray]:
    photos = {name: rgb(getattr(data, name)()) for name in FREE}
    out = {}
    for name, a in photos.items():
        s = side / max(a.shape[:2])
        out[name] = resize(a, a.shape[1] * s, a.shape[0] * s)
        out[name + " rot90"] = np.ascontiguousarray(np.rot90(out[name]))
    for i in range(0, len(FREE) - 3, 4):
        quads = [resize(photos[name], side // 2, side // 2) for name in FREE[i:i + 4]]
        mosaic = np.concatenate([np.concatenate(quads[:2], 1), np.concatenate(quads[2:], 1)], 0)
        out["mosaic " + "+".join(FREE[i:i + 4])] = mosaic
    return out


def matched(detections, truths) -> int:
    used, hits = set(), 0
    for t in truths:
        for j, d in enumerate(detections):
            cx, cy = (d[0] + d[2]) / 2, (d[1] + d[3]) / 2
            tx, ty = (t[0] + t[2]) / 2, (t[1] + t[3]) / 2
            if j not in used and t[0] <= cx <= t[2] and t[1] <= cy <= t[3] and d[0] <= tx <= d[2] and d[1] <= ty <= d[3]:
                used.add(j)
                hits += 1
                break
    return hits


def counting(detector: MediaPipeFaceDetector) -> MediaPipeFaceDetector:
    """Count the detector's model calls (whole image, windows, tiles, close-ups) in detector.calls."""
    detect, detector.calls = detector._detect, []

    def counted(image, model=None):
        detector.calls[-1] += 1
        return detect(image, model)

    detector._detect = counted
    return detector


def timed(detector, image):
    detector.calls.append(0)
    t0 = time.perf_counter()
    faces = detector(image)
    return [f.box for f in faces], time.perf_counter() - t0


def main() -> None:
    params = Ontology.load().data["features"]["faces"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", type=int, nargs="+", default=[256, 384, 512, 768, 1024, 1536])
    parser.add_argument("--tiles", type=int, default=params.get("tiles", 4))
    parser.add_argument("--tile-overlap", type=float, default=params.get("tile_overlap", 0.25))
    parser.add_argument("--tile-min-side", type=int, default=params.get("tile_min_side", 64))
    parser.add_argument("--max-tiles", type=int, default=params.get("max_tiles", 40))
    parser.add_argument("--verify-context", type=float, default=params.get("verify_context", 5.0))
    parser.add_argument("--verify-score", type=float, default=params.get("verify_score", 0.65))
    args = parser.parse_args()
    confidence = float(params.get("min_detection_confidence", 0.5))
    detectors = {"before": counting(MediaPipeFaceDetector(1, confidence, tiles=0)),
                 "after": counting(MediaPipeFaceDetector(1, confidence, args.tiles, args.tile_overlap,
                                                         args.tile_min_side, args.max_tiles, args.verify_context,
                                                         args.verify_score))}
    people = portraits()
    print(f"after: tiles {args.tiles}, tile_overlap {args.tile_overlap}, tile_min_side {args.tile_min_side}, "
          f"max_tiles {args.max_tiles}, verify_context {args.verify_context}, verify_score {args.verify_score}\n")
    cost = {name: [] for name in detectors}
    for side in args.sides:
        start = {name: len(values) for name, values in cost.items()}
        recall = {name: {} for name in detectors}
        extra = dict.fromkeys(detectors, 0)
        for fraction in FRACTIONS:
            for b, (bg_name, background) in enumerate(backgrounds(side).items()):
                image, truths = crowd(side, fraction, background, people, seed=side + 7 * b + int(fraction * 1000))
                for name, detector in detectors.items():
                    boxes, seconds = timed(detector, image)
                    cost[name].append(seconds)
                    hits = matched(boxes, truths)
                    found, total = recall[name].get(fraction, (0, 0))
                    recall[name][fraction] = (found + hits, total + len(truths))
                    extra[name] += len(boxes) - hits
        print(f"side {side} px: recall by face width (% of side), found/total")
        print(f"  {'':7s}" + "".join(f"{100 * f:>9.1f}" for f in FRACTIONS) + "   unmatched detections")
        for name in detectors:
            cells = "".join(f"{found:>5d}/{total:<3d}" for found, total in (recall[name][f] for f in FRACTIONS))
            print(f"  {name:7s}{cells}   {extra[name]}")
        free = face_free(side)
        for name, detector in detectors.items():
            false = {}
            for photo, image in free.items():
                boxes, seconds = timed(detector, image)
                cost[name].append(seconds)
                if boxes:
                    false[photo] = len(boxes)
            print(f"  {name:7s}face-free: {sum(false.values())} faces in {len(false)} of {len(free)} images {false or ''}")
        for name, values in cost.items():
            ms, calls = np.asarray(values[start[name]:]) * 1000, np.asarray(detectors[name].calls[start[name]:])
            print(f"  {name:7s}{np.median(ms):6.1f} ms/image median, p90 {np.percentile(ms, 90):6.1f}; model calls/image "
                  f"median {np.median(calls):.0f}, max {calls.max()} (n={len(ms)})")
        print()
    for name, values in cost.items():
        ms, calls = np.asarray(values) * 1000, np.asarray(detectors[name].calls)
        print(f"{name:7s} {np.median(ms):6.1f} ms/image median, p90 {np.percentile(ms, 90):6.1f}, mean {ms.mean():6.1f}; "
              f"model calls/image median {np.median(calls):.0f}, mean {calls.mean():.1f}, max {calls.max()} (n={len(ms)})")


if __name__ == "__main__":
    main()
