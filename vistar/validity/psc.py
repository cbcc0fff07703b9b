"""PSC validity: a ball or a cube at a block's front face, sunk into it (penetration), resting on the ground
against it, or floating in front of it, rendered with exact depth (vistar.synth.scenes.at_block_face); and a ball
or cube on a block's top face seen from above, sunk into it or resting on it (vistar.synth.block_top: the contact
is in view), also on a top 1.25-2 times as long as it is wide (version 6: a long top's foreshortening does not give
the camera's elevation; version 7 reads it from the block's front face). PSC must score the sunk solid below the
others (ROC-AUC over all sunk vs not-sunk scenes).

TUNING (`python benchmarks/bench_psc_validity.py ball --split tuning`) is what the flush rule, the support rule
(version 3: `support_relax`, `step_frac`) and the sink reading (version 5: `sink_low`, `sink_high`, `top_tol_frac`;
version 6: the elevation check and `sink_high`, on square and long tops; version 7: the top/sides split; version 8:
the top ring's spread check; version 10: the cube's `cube_sink_low`, `cube_sink_high`) were chosen on; VALIDATION
differs in seeds (and for the block-face family in camera elevation and image size; for the long tops in their
range).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.params import metric_params
from ..metrics.psc import METRIC
from ..ontology import Ontology
from ..synth.block_top import TOP_PLACEMENTS, on_block_top
from ..synth.scenes import PLACEMENTS, at_block_face, imperfect_features, render
from . import ValidityRow


@dataclass(frozen=True)
class Split:
    seed_offset: int
    elevation_deg: tuple[float, float]
    sizes: tuple[tuple[int, int], ...]
    top_seed_offset: int                       # the top-face family: its own seeds, elevations (seen from above)
    top_elevation_deg: tuple[float, float]     # and sizes
    top_sizes: tuple[tuple[int, int], ...]
    long_seed_offset: int                      # the long-top family: the top family's elevations and sizes, its
    long_elongation: tuple[float, float]       # own seeds, the top's long side over its short side in this range
    cube_top_seed_offset: int                  # the cube on a (square) top: the top family's draw, or its own


# Top-face family: tuning widened to validation's elevations and sizes for version 5; validation redrawn then
# (seeds 7 000 000+ had been looked at to diagnose version 4)
# Long tops (added with the ball's elevation check): tuning from square to twice as long, validation from 1.25 to
# twice as long (aspect 0.5-0.8 or 1.25-2), on seeds no run had used; redrawn for version 7 (seeds 11 000 000+ had
# been looked at to diagnose version 6)
# Cube on a top: redrawn for version 10 (seeds 9 000 000+, the ball's, had been run with version 9)
TUNING = Split(50_000, (10, 35), ((96, 128),), 50_000, (12, 50), ((96, 128), (144, 192)), 70_000, (1.0, 2.0), 50_000)
VALIDATION = Split(7_000_000, (8, 40), ((96, 128), (144, 192)), 9_000_000, (12, 50), ((96, 128), (144, 192)),
                   13_000_000, (1.25, 2.0), 15_000_000)
OLD_LONG_DRAW = 11_000_000   # version 6's validation draw of the long tops, reported beside the redraw
OLD_CUBE_TOP_DRAW = 9_000_000   # version 9's validation draw of the cube on a top, reported beside the redraw
FAMILIES = {"face": (at_block_face, PLACEMENTS), "top": (on_block_top, TOP_PLACEMENTS),
            "long": (on_block_top, TOP_PLACEMENTS)}


def roc_auc(positives: list[float], negatives: list[float]) -> float:
    """P(a penetrating scene scores below a clean one), ties counting half (Mann-Whitney)."""
    pos, neg = np.asarray(positives)[:, None], np.asarray(negatives)[None]
    return float((pos < neg).mean() + 0.5 * (pos == neg).mean())


def scores(split: Split, n: int, seed: int = 0, model_like: bool = False, shape: str = "ball",
           family: str = "face") -> dict[str, list[float]]:
    """PSC per placement for N seeded layouts of SHAPE at the block's FAMILY (front face, top, or long top);
    MODEL_LIKE blurs depth 1.5 px and moves mask edges 1 px."""
    params = metric_params(Ontology.load(), METRIC)
    noise = np.random.default_rng(seed)
    build, placements = FAMILIES[family]
    face = family == "face"
    elevations, sizes = (split.elevation_deg, split.sizes) if face else (split.top_elevation_deg, split.top_sizes)
    offset = {"face": split.seed_offset, "top": split.top_seed_offset, "long": split.long_seed_offset}[family]
    offset = split.cube_top_seed_offset if (shape, family) == ("cube", "top") else offset
    extra = {"elongation": split.long_elongation} if family == "long" else {}
    out: dict[str, list[float]] = {kind: [] for kind in placements}
    for i in range(n):
        index = offset + seed * n + i
        size = sizes[i % len(sizes)]
        for kind in placements:
            rng = np.random.default_rng(index)          # same block and solid size for every placement
            elevation = float(rng.uniform(*elevations))
            scene = render(build(rng, kind, shape, **extra), kind, *size, elevation_deg=elevation)
            inst, depth = imperfect_features(scene, noise) if model_like else (scene.instances, scene.inverse_depth)
            out[kind].append(METRIC.fn({"instances": inst, "depth": depth}, {}, params, None).score)
    return out


CONTENTS = {   # what each row measures
    ("ball", "face"): "ball sunk into / resting against / floating before a block face",
    ("cube", "face"): "cube sunk into / resting against / floating before a block face (a resting cube's top edge "
                      "meets the face with no depth step; it is told apart by standing on the ground, docs/metrics/psc.md)",
    ("ball", "top"): "ball sunk 30-90 % of its radius into / resting on a block's top face, seen from above",
    ("cube", "top"): "cube sunk 30-90 % of its half-size into / resting on a block's top face, seen from above",
    ("ball", "long"): "ball sunk 30-90 % of its radius into / resting on a block's top 1.25-2 times as long as it "
                      "is wide, either way round, seen from above",
}
MODEL_LIKE = "depth blurred 1.5 px, masks ±1 px"
GOALS: dict[tuple[str, str], float | None] = {   # None: reported, no goal (why: SHORTFALL)
    ("ball", "face"): 0.95, ("cube", "face"): 0.95, ("ball", "top"): 0.9, ("cube", "top"): None,
    ("ball", "long"): 0.9}
SHORTFALL = {   # why a set falls short of its goal (or has none), printed under `vistar validate`
    ("ball", "face"): "a sunk solid low on the face shows the ground beneath it and stands like a resting one",
    ("cube", "face"): "a sunk solid low on the face shows the ground beneath it and stands like a resting one",
    ("ball", "top"): "how deep the ball reads as sunk, in radii, scatters by about a quarter of its radius under a "
                     "1.5 px blur and 1 px mask errors on a ball 5-10 px in radius (96x128), so a ball sunk 30-40 % "
                     "overlaps a resting one (docs/metrics/psc.md)",
    ("ball", "long"): "the elevation comes from the block's front face against its top; a ball 5-10 px in radius "
                      "under a 1.5 px blur and 1 px mask errors still reads its sink depth to about a quarter of its "
                      "radius, so a ball sunk 30-40 % overlaps a resting one (docs/metrics/psc.md)",
    ("cube", "top"): "no goal: a resting cube's bottom edge lies on the face in view as a sunk cube's intersection "
                     "line does, and both rise from it as a vertical face; the cube's size and the elevation it is "
                     "seen from are read from its own top (version 10), whose crease with its front a 1.5 px blur "
                     "moves by a pixel on a cube 10-20 px wide",
}
NAMES = {"face": "at a block face", "top": "on a block top", "long": "on a long block top"}


def run_shape(shape: str, n: int, seed: int, split: Split = VALIDATION, family: str = "face") -> list[ValidityRow]:
    rows = []
    goal = GOALS[shape, family]
    low, high = split.elevation_deg if family == "face" else split.top_elevation_deg
    for model_like, label, note in ((False, "exact depth", CONTENTS[shape, family]),
                                    (True, "model-like", f"{CONTENTS[shape, family]}; {MODEL_LIKE}")):
        s = scores(split, n, seed, model_like, shape, family)
        auc = roc_auc(s["sunk"], [v for kind, values in s.items() if kind != "sunk" for v in values])
        met = goal is None or auc >= goal
        cause = "" if met and goal else f"; {'' if met else 'shortfall: '}{SHORTFALL[shape, family]}"
        note = f"{note}; camera elevation {low:g}-{high:g}°{cause}"
        rows.append(ValidityRow("PSC", f"{shape} {NAMES[family]}", len(s) * n, f"ROC-AUC sunk vs not, {label}", auc,
                                "report" if goal is None else f">= {goal:g}", bool(met), note))
    return rows


def run_ball(n: int, seed: int, split: Split = VALIDATION) -> list[ValidityRow]:
    return run_shape("ball", n, seed, split)


def run_cube(n: int, seed: int, split: Split = VALIDATION) -> list[ValidityRow]:
    return run_shape("cube", n, seed, split)


def run_ball_top(n: int, seed: int, split: Split = VALIDATION) -> list[ValidityRow]:
    return run_shape("ball", n, seed, split, "top")


def run_cube_top(n: int, seed: int, split: Split = VALIDATION) -> list[ValidityRow]:
    return run_shape("cube", n, seed, split, "top")


def run_ball_long_top(n: int, seed: int, split: Split = VALIDATION) -> list[ValidityRow]:
    return run_shape("ball", n, seed, split, "long")


SETS = {"ball at a block face": run_ball, "cube at a block face": run_cube,
        "ball on a block top": run_ball_top, "cube on a block top": run_cube_top,
        "ball on a long block top": run_ball_long_top}
FULL_N = {name: 60 for name in SETS}
