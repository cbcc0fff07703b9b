"""LI validity: rendered scenes with known light, camera pitch and focal length, read by the classical shadow
detector and the LI light estimate (camera pitch measured in the image, docs/metrics/li.md).

TUNING is what the pitch cue, the frontal rule and the minimum fit agreement were chosen on (`python
benchmarks/bench_li_validity.py pitch --split tuning`, `python benchmarks/bench_li_agreement.py`); VALIDATION
differs in seeds, field of view, light elevation and object count. The CROWDED_ pair holds 3-5 solids placed in
each other's shadows (synth.lighting.crowded_solids).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..engine.params import metric_params
from ..features.shadows_classical import ClassicalShadowDetector
from ..features.thumbnail import resize_longest
from ..metrics.li import read_light
from ..metrics.light_geometry import angle_between
from ..ontology import Ontology
from ..synth.lighting import LightScene, crowded_solids, random_solids, render
from . import ValidityRow


@dataclass(frozen=True)
class Split:
    seed_offset: int
    pitch_deg: tuple[float, float]
    fov_deg: tuple[float, float]          # vertical field of view (focal length)
    elevation_deg: tuple[float, float]    # light elevation
    objects: tuple[int, int]              # inclusive range of solids per scene
    crowded: bool = False                 # solids placed in each other's shadows (synth.lighting.crowded_solids)


TUNING = Split(800_000, (10, 45), (35, 65), (15, 65), (1, 3))
VALIDATION = Split(3_000_000, (10, 45), (30, 70), (10, 70), (1, 4))
CROWDED_TUNING = Split(810_000, (10, 45), (35, 65), (15, 60), (3, 5), crowded=True)
CROWDED_VALIDATION = Split(3_100_000, (10, 45), (30, 70), (15, 60), (3, 5), crowded=True)
FRONT_DEG = 30   # true light within this azimuth of the camera: its shadows fall behind the objects


def light_vector(azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    """Unit vector towards the light; azimuth 0 = from the camera's side (front), 90 = from the right."""
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    return np.array([math.sin(az) * math.cos(el), math.sin(el), math.cos(az) * math.cos(el)])


def sample(split: Split, index: int) -> tuple[LightScene, float]:
    """(scene, true light azimuth) for item INDEX of SPLIT: everything drawn from one seeded generator."""
    rng = np.random.default_rng(split.seed_offset + index)
    n = int(rng.integers(split.objects[0], split.objects[1] + 1))
    if split.crowded:
        azimuth = float(rng.uniform(-180, 180))
        light = light_vector(azimuth, float(rng.uniform(*split.elevation_deg)))
        solids = crowded_solids(rng, n, light)
    else:
        solids = random_solids(rng, n)
        azimuth = float(rng.uniform(-180, 180))
        light = light_vector(azimuth, float(rng.uniform(*split.elevation_deg)))
    scene = render(solids, light, pitch_deg=float(rng.uniform(*split.pitch_deg)),
                   fov_deg=float(rng.uniform(*split.fov_deg)), seed=index)
    return scene, azimuth


def measure(split: Split, n: int, seed: int = 0) -> dict:
    """Per scene: angular error (None without a pair), low-confidence flag, pitch error, true azimuth."""
    params, detector = metric_params(Ontology.load(), "LI"), ClassicalShadowDetector()
    out = {"error": [], "low_confidence": [], "pitch_error": [], "azimuth": [], "source": []}
    for i in range(n):
        scene, azimuth = sample(split, seed * n + i)
        reading = read_light(scene.instances, detector(scene.image, scene.instances), params,
                             resize_longest(scene.image, 256))
        out["error"].append(None if reading.vector is None else math.degrees(angle_between(reading.vector, scene.light)))
        out["low_confidence"].append(reading.doubt is not None)
        out["pitch_error"].append(reading.pitch.pitch_deg - scene.pitch_deg)
        out["azimuth"].append(azimuth)
        out["source"].append(reading.pitch.source)
    return out


def run_scenes(n: int, seed: int, split: Split = VALIDATION) -> list[ValidityRow]:
    m = measure(split, n, seed)
    scored = [e for e, f in zip(m["error"], m["low_confidence"]) if e is not None and not f]
    front = [abs(a) < FRONT_DEG for a in m["azimuth"]]
    flagged = [e is None or f for e, f in zip(m["error"], m["low_confidence"])]
    med = float(np.median(scored)) if scored else float("nan")
    p90 = float(np.percentile(scored, 90)) if scored else float("nan")
    pitch = np.abs(m["pitch_error"])
    note = (f"pitch {split.pitch_deg[0]:g}-{split.pitch_deg[1]:g}°, vertical fov {split.fov_deg[0]:g}-{split.fov_deg[1]:g}°, light elevation "
            f"{split.elevation_deg[0]:g}-{split.elevation_deg[1]:g}°, azimuth uniform; classical shadow detector")
    n_front = sum(front)
    caught = sum(fl for fl, fr in zip(flagged, front) if fr) / n_front if n_front else float("nan")  # none drawn
    return [
        ValidityRow("LI", "rendered scenes", len(scored), "median error (deg), scored", med, "<= 10",
                    bool(med <= 10), note),
        ValidityRow("LI", "rendered scenes", len(scored), "p90 error (deg), scored", p90, "<= 25",
                    bool(p90 <= 25), "low-confidence (frontal, poor fit) and pair-less scenes are skipped, not scored"),
        ValidityRow("LI", "rendered scenes", n, "share of scenes scored", len(scored) / n, "report", True,
                    "the rest: no object-shadow pair, or low confidence (light estimated within frontal_cone_deg "
                    "of the front, or a joint fit below min_fit_iou)"),
        ValidityRow("LI", "rendered scenes", n_front, f"front-lit (<{FRONT_DEG}°) skipped", caught,
                    "report", True, "shadows behind their objects: low confidence or no pair"),
        ValidityRow("LI", "rendered scenes", n, "median |pitch error| (deg)", float(np.median(pitch)), "report", True,
                    " / ".join(f"{s} {m['source'].count(s)}" for s in ("horizon", "assumed"))),
    ]


def run_crowded(n: int, seed: int, split: Split = CROWDED_VALIDATION) -> list[ValidityRow]:
    """3-5 solids, each standing in the cast shadow of another: merged and cut shadows, shadows on objects."""
    m = measure(split, n, seed)
    scored = [e for e, f in zip(m["error"], m["low_confidence"]) if e is not None and not f]
    med = float(np.median(scored)) if scored else float("nan")
    p90 = float(np.percentile(scored, 90)) if scored else float("nan")
    note = (f"{split.objects[0]}-{split.objects[1]} solids in each other's shadows, light elevation "
            f"{split.elevation_deg[0]:g}-{split.elevation_deg[1]:g}°, pitch and fov as rendered scenes")
    return [
        ValidityRow("LI", "crowded scenes", len(scored), "median error (deg), scored", med, "report", True, note),
        ValidityRow("LI", "crowded scenes", len(scored), "p90 error (deg), scored", p90, "<= 20",
                    bool(p90 <= 20), "shadows cut by or falling on other objects"),
        ValidityRow("LI", "crowded scenes", n, "share of scenes scored", len(scored) / n, "report", True,
                    "the rest: no object-shadow pair, or low confidence"),
    ]


SETS = {"rendered scenes": run_scenes, "crowded scenes": run_crowded}
FULL_N = {"rendered scenes": 200, "crowded scenes": 200}
