"""PSC tells a ball sunk into a block's front face from one resting against it or floating in front of it
(ground-truth renders), and the validity slice runs."""
from dataclasses import replace

import pytest

from vistar.engine.params import metric_params
from vistar.metrics.psc import METRIC, score_pairs
from vistar.ontology import Ontology
from vistar.synth.scenes import Box, Sphere, render
from vistar.validity.psc import SETS, roc_auc

PARAMS = metric_params(Ontology.load(), "PSC")
BLOCK = Box((-0.8, 0.0, -0.8), (0.8, 1.2, 0.8))


def _score(ball: Sphere):
    scene = render([BLOCK, ball], "test", 96, 128, elevation_deg=20)
    return METRIC.fn({"instances": scene.instances, "depth": scene.inverse_depth}, {}, PARAMS, None), scene


def test_half_sunk_ball_is_a_penetration_not_an_attachment():
    sunk, scene = _score(Sphere((0.1, 0.6, -0.8), 0.35))          # centre on the face plane: half inside
    pair = score_pairs(scene.instances, scene.inverse_depth, PARAMS)[0]
    # the ball's box lies inside the block's, but its body stands out of the face: no relaxation
    assert pair["status"] == "scored" and not pair["attached"]
    resting, rest_scene = _score(Sphere((0.1, 0.35, -0.8 - 0.35), 0.35))   # on the ground, touching the face
    assert pair["support"] == 0.0       # the face continues beneath the sunk ball: it hangs on it
    # the resting ball stands on the ground; only its outermost columns look past its side onto the face
    assert score_pairs(rest_scene.instances, rest_scene.inverse_depth, PARAMS)[0]["support"] > 0.8
    floating, _ = _score(Sphere((0.1, 0.7, -0.8 - 0.35 - 0.3), 0.35))
    assert sunk.score < resting.score and sunk.score < floating.score
    relaxed = METRIC.fn({"instances": scene.instances, "depth": scene.inverse_depth}, {}, replace(PARAMS, flush_frac=1.0), None)
    assert relaxed.score > sunk.score      # version 1's reading (any enclosed object attached) forgave it


def test_roc_auc_counts_ties_half():
    assert roc_auc([0.1, 0.2], [0.3, 0.4]) == 1.0
    assert roc_auc([0.5], [0.5]) == 0.5
    assert roc_auc([0.4, 0.1], [0.3]) == 0.5


@pytest.mark.slow
def test_validity_slices_run():
    for name, run in SETS.items():
        rows = run(3, 0)
        placements = 2 if "top" in name else 3      # the top face has no floating placement
        assert len(rows) == 2 and all(r.angle == "PSC" and r.set == name and r.n == 3 * placements and 0 <= r.value <= 1
                                      for r in rows)
