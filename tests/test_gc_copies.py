"""GC's `copies` cue on hand-made images: a copied block is found at its offset; clean noise, a gradient, a
perfectly periodic pattern and repeated-but-not-identical motifs are not flagged."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from vistar.engine.params import metric_params
from vistar.metrics.gc import cue_scores
from vistar.metrics.gc_copy import copy_move
from vistar.ontology import Ontology

PARAMS = metric_params(Ontology.load(), "GC")
SIZE = (192, 256)


def _args() -> tuple:
    p = PARAMS
    return (p.copy_block, p.copy_blur, p.copy_min_residual, p.copy_max_coherence, p.copy_min_corr, p.copy_margin,
            p.copy_min_pairs)


def _texture(seed: int, shape: tuple[int, int] = SIZE) -> np.ndarray:
    """Blobs of every size (smoothed noise, 0-255): textured everywhere, nowhere alike."""
    rng = np.random.default_rng(seed)
    noise = cv2.GaussianBlur(rng.normal(0, 1, shape).astype(np.float32), (0, 0), 1.5)
    noise = (noise - noise.min()) / (noise.max() - noise.min()) * 255
    return np.repeat(noise.astype(np.uint8)[..., None], 3, axis=2)


def test_a_copied_block_is_found_with_its_offset():
    image = _texture(0)
    side, (y, x), (dy, dx) = 40, (20, 150), (110, -120)
    image[y + dy:y + dy + side, x + dx:x + dx + side] = image[y:y + side, x:x + side]
    value, details = copy_move(image, *_args())
    assert details["offset"] == [dy, dx]
    both_ends = 2 * side * side / (SIZE[0] * SIZE[1])   # the share the two copies cover
    reach = 2 * (side + PARAMS.copy_block) ** 2 / (SIZE[0] * SIZE[1])   # blocks that straddle a copy's edge match too
    assert 0.5 * both_ends < value <= reach
    assert cue_scores(image, np.zeros(SIZE, np.float32), None, PARAMS)["copies"]["score"] < 0.01


def test_the_offset_is_named_from_either_end():
    image = _texture(1)
    side, (y, x), (dy, dx) = 36, (120, 30), (-90, 140)     # copied upwards: the same pair, seen from the copy
    image[y + dy:y + dy + side, x + dx:x + dx + side] = image[y:y + side, x:x + side]
    assert copy_move(image, *_args())[1]["offset"] == [-dy, -dx]


@pytest.mark.parametrize("seed", [2, 3])
def test_clean_noise_is_not_flagged(seed):
    assert copy_move(_texture(seed), *_args())[0] == 0.0


def test_a_gradient_is_not_flagged():
    ramp = np.tile(np.linspace(0, 255, SIZE[1]), (SIZE[0], 1)).astype(np.uint8)
    assert copy_move(np.repeat(ramp[..., None], 3, axis=2), *_args()) == (0.0, {"matches": 0, "offset": [0, 0]})


def test_a_perfectly_periodic_pattern_is_not_flagged():
    tile = _texture(4, (24, 32))
    wall = np.tile(tile, (SIZE[0] // 24, SIZE[1] // 32, 1))
    assert copy_move(np.ascontiguousarray(wall), *_args())[0] == 0.0    # every match has its twin a period further


def test_repeated_but_not_identical_motifs_are_not_flagged():
    rng = np.random.default_rng(5)
    image = np.full(SIZE, 200, np.uint8)
    for row in range(10, SIZE[0] - 20, 22):
        for col in range(4, SIZE[1] - 20, 18):    # letters on a jittered grid, each drawn at its own size and weight
            cv2.putText(image, "AKR"[int(rng.integers(3))], (col + int(rng.integers(-2, 3)), row + 16),
                        cv2.FONT_HERSHEY_SIMPLEX, rng.uniform(0.5, 0.6), 40, int(rng.integers(1, 3)), cv2.LINE_AA)
    image = np.clip(image + rng.normal(0, 4, SIZE), 0, 255).astype(np.uint8)
    assert copy_move(np.repeat(image[..., None], 3, axis=2), *_args())[0] == 0.0


def test_images_too_small_to_match_are_clean():
    assert copy_move(np.zeros((10, 300, 3), np.uint8), *_args())[0] == 0.0
