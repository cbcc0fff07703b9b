"""GC cues on constructed inputs with known answers, and the GC metric's min-of-cues contract."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from vistar.engine.params import metric_params
from vistar.metrics import gc_cues as cues
from vistar.metrics.gc import METRIC, cue_scores
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt

PARAMS = metric_params(Ontology.load(), "GC")
PROMPT = parse_prompt("[GA|GC] a stone archway")


def _plane(h=64, w=80):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    return 0.3 + 0.01 * x - 0.02 * y


def test_planar_depth_has_zero_curvature_and_no_normal_dispersion():
    plane = cues.normalise_depth(_plane())
    value, _ = cues.depth_curvature(plane)
    assert value < 1e-12
    angle, _ = cues.normal_dispersion(plane, 5)
    assert angle < 1e-6
    assert cues.to_score(value, PARAMS.curvature_scale) > 1 - 1e-9


def test_bumpy_depth_scores_lower_on_both_depth_cues():
    rng = np.random.default_rng(0)
    bumpy = cues.normalise_depth(_plane() + 0.05 * rng.standard_normal(_plane().shape))
    plane = cues.normalise_depth(_plane())
    assert cues.depth_curvature(bumpy)[0] > 10 * max(cues.depth_curvature(plane)[0], 1e-6)
    assert cues.normal_dispersion(bumpy, 5)[0] > 0.2


def test_a_sphere_cap_has_the_curvature_of_a_sphere():
    # z = sqrt(R² − x² − y²) ≈ R − (x² + y²) / (2R): Laplacian ≈ −2 / R in pixel units (before normalisation)
    y, x = np.mgrid[-20:21, -20:21].astype(np.float64)
    radius = 200.0
    cap = np.sqrt(radius ** 2 - x ** 2 - y ** 2)
    value, _ = cues.depth_curvature(cap)
    assert abs(value - 2.0 / radius) < 2e-4


def _outlines(dashed: bool) -> np.ndarray:
    """A rectangle and a circle, drawn whole or as 4-pixel dashes (gaps 8 pixels)."""
    image = np.full((256, 256, 3), 30, np.uint8)
    colour = (230, 230, 230)
    if not dashed:
        cv2.rectangle(image, (30, 30), (220, 220), colour, 2)
        cv2.circle(image, (128, 128), 60, colour, 2)
        return image
    for k in range(30, 220, 12):
        for a, b in (((k, 30), (k + 4, 30)), ((k, 220), (k + 4, 220)), ((30, k), (30, k + 4)), ((220, k), (220, k + 4))):
            cv2.line(image, a, b, colour, 2)
    for start in range(0, 360, 12):
        cv2.ellipse(image, (128, 128), (60, 60), 0, start, start + 4, colour, 2)
    return image


def test_broken_contours_score_lower_than_intact_ones():
    intact, _ = cues.contour_fragmentation(_outlines(False), PARAMS.canny_low, PARAMS.canny_high, PARAMS.contour_min_frac)
    broken, details = cues.contour_fragmentation(_outlines(True), PARAMS.canny_low, PARAMS.canny_high, PARAMS.contour_min_frac)
    assert intact == 0.0 and broken > 0.8 and details["segments"] > 20
    assert cues.contour_fragmentation(np.zeros((32, 32, 3), np.uint8), 50, 150, 0.03)[0] == 0.0


def _stripes(h=96, w=96, period=8):
    x = np.arange(w)
    row = (127 + 100 * np.sin(2 * np.pi * x / period)).astype(np.uint8)
    return np.repeat(np.tile(row, (h, 1))[..., None], 3, -1)


@pytest.mark.slow
def test_regular_texture_is_more_regular_than_a_patchwork():
    regular, _ = cues.lbp_irregularity(_stripes(), 4)
    rng = np.random.default_rng(1)
    patchwork = _stripes().copy()
    patchwork[:48, :48] = rng.integers(0, 256, (48, 48, 1))             # a noisy patch
    patchwork[48:, 48:] = np.rot90(_stripes(48, 48, 5))                   # other orientation and period
    irregular, _ = cues.lbp_irregularity(patchwork, 4)
    assert regular < 0.01 and irregular > 5 * regular + 0.02


def _streak(gaps: bool) -> np.ndarray:
    image = np.zeros((64, 128, 3), np.uint8)
    image[...] = (40, 60, 160)                       # saturated blue: not a highlight
    image[28:34, 10:118] = 250                       # one long specular streak
    if gaps:
        image[28:34, 20:118:12] = (40, 60, 160)      # 1-pixel breaks every 12 pixels
    return image


def test_broken_highlight_scores_lower_than_continuous():
    args = (PARAMS.highlight_value, PARAMS.highlight_saturation, int(PARAMS.highlight_gap_px))
    whole, d_whole = cues.highlight_breaks(_streak(False), *args)
    broken, d_broken = cues.highlight_breaks(_streak(True), *args)
    assert whole == 0.0 and d_whole["highlights"] == 1
    assert d_broken["highlights"] == 1 and d_broken["fragments"] == 10 and broken == 9.0   # 9 breaks
    assert cues.highlight_breaks(np.zeros((16, 16, 3), np.uint8), *args) == (0.0, {"highlights": 0, "fragments": 0})


def test_gc_is_the_minimum_cue_and_names_it():
    image = _outlines(True)
    depth = _plane(256, 256)
    result = METRIC.fn({"thumbnail": image, "depth": depth, "padim": None}, {}, PARAMS, PROMPT)
    scores = {name: cue["score"] for name, cue in result.details["cues"].items()}
    assert set(scores) == {"normals", "curvature", "highlights", "contours", "texture", "copies", "stretch"}   # no PaDiM stats
    assert result.score == min(scores.values()) and result.details["weakest"] == "contours"
    assert scores["normals"] > 0.9999 and scores["curvature"] > 0.9999   # the depth is a plane


def test_depth_is_resampled_to_the_thumbnail_grid():
    scores = cue_scores(_stripes(48, 64), _plane(96, 128), None, PARAMS)
    assert scores["curvature"]["value"] < 1e-6


def test_rendered_scene_depth_is_coherent_and_noise_is_not():
    from vistar.synth.scenes import scene_pair

    scene = scene_pair(0, 96, 128)[1]
    clean = cue_scores(scene.image, scene.inverse_depth, None, PARAMS)
    rng = np.random.default_rng(0)
    noisy_depth = scene.inverse_depth * (1 + 0.02 * rng.standard_normal(scene.inverse_depth.shape)).astype(np.float32)
    noisy = cue_scores(scene.image, noisy_depth, None, PARAMS)
    for cue in ("normals", "curvature"):
        assert clean[cue]["score"] > 0.8 and noisy[cue]["score"] < 0.3, (cue, clean[cue], noisy[cue])


def _waves(h=128, w=160, band=(40, 80)):
    """60·cos(πy/2) + 60·cos(πx/2) + 128, rows BAND at half the vertical frequency (stretched 2x along y)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    freq_y = np.where((y >= band[0]) & (y < band[1]), np.pi / 4, np.pi / 2)
    image = np.round(128 + 60 * np.cos(freq_y * y) + 60 * np.cos(np.pi / 2 * x)).astype(np.uint8)
    return np.repeat(image[..., None], 3, axis=2)


def test_a_band_stretched_along_one_axis_falls_by_its_lost_second_difference_energy():
    # second-difference energy of 60·cos(ωt): (2 − 2cos ω)² · 60² / 2; across stays at ω = π/2, along drops to π/4
    energy = lambda omega: (2 - 2 * np.cos(omega)) ** 2 * 3600 / 2   # noqa: E731
    expected = np.log((energy(np.pi / 2) + 1) / (energy(np.pi / 4) + 1))
    value, details = cues.stretched_band(_waves(), PARAMS.band_frac)
    assert value == pytest.approx(expected, abs=0.05) and details["axis"] == 0
    assert 40 <= details["band_start_px"] <= 80
    turned, turned_details = cues.stretched_band(np.ascontiguousarray(_waves().transpose(1, 0, 2)), PARAMS.band_frac)
    assert turned == pytest.approx(expected, abs=0.05) and turned_details["axis"] == 1


def test_an_unstretched_image_and_a_flat_one_have_no_band():
    assert cues.stretched_band(_waves(band=(0, 0)), PARAMS.band_frac)[0] < 0.05
    assert cues.stretched_band(np.full((40, 50, 3), 90, np.uint8), PARAMS.band_frac)[0] == 0.0
    assert cues.stretched_band(np.zeros((2, 50, 3), np.uint8), PARAMS.band_frac)[0] == 0.0   # too small to judge
