"""TR on rendered posters through the real RapidOCR: rotated multi-line text, two columns under a title, accented
Greek (reported, not scored), decorative glyphs (ground truth = the text drawn, vistar.synth.text.render_poster)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from vistar.api import StageContext, StageInput
from vistar.engine.params import metric_params
from vistar.features.ocr import STAGE
from vistar.metrics.tr import METRIC
from vistar.ontology import Ontology
from vistar.synth.text import background, poster_fonts, render_poster

ONTOLOGY = Ontology.load(None)
PARAMS = metric_params(ONTOLOGY, "TR")
CTX = StageContext(features=ONTOLOGY.data["features"])
SANS = next(f for f in poster_fonts() if f and f.endswith("DejaVuSans.ttf"))


def tr(image, expected: str):
    [ocr] = STAGE.compute([StageInput(np.asarray(image), None, {})], CTX)
    return METRIC.fn({"ocr": ocr}, {"text": expected}, PARAMS, None)


def poster(title: list[str], columns: list[list[str]], angle: float, bg: str = "camera", **style):
    base = background(bg, 512, random.Random(3))
    return render_poster(base, title, columns, font=SANS, font_size=26, ink=(255, 255, 255), stroke=2, angle=angle, **style)


@pytest.mark.slow
@pytest.mark.parametrize("angle", [-15, 15])
def test_rotated_multi_line_poster_orders_correct_typo_missing(angle):
    lines = ["HARBOUR LIGHTS", "FESTIVAL TONIGHT", "FREE ENTRY"]
    expected = " ".join(lines)
    correct = tr(poster(lines, [], angle), expected)
    typo = tr(poster(["HARBOUR LIGHTS", "FESTIVAI TONIGHT", "FREE ENTRY"], [], angle), expected)
    missing = tr(poster(["HARBOUR LIGHTS", "TONIGHT", "FREE ENTRY"], [], angle), expected)
    assert correct.score >= 0.95 and correct.score > typo.score > missing.score, (correct.details["recognised"], typo.score, missing.score)


def test_title_over_two_rotated_columns():
    title, left, right = ["SUMMER MARKET"], ["FRESH BREAD", "LOCAL HONEY"], ["LIVE MUSIC", "FREE ENTRY"]
    result = tr(poster(title, [left, right], -10, bg="noise"), " ".join(title + left + right))
    assert result.score >= 0.95 and result.details["layout"] == "columns", result.details["recognised"]


def test_accented_greek_poster_is_reported_not_scored():
    # ή ό are not in PP-OCRv6's alphabet and Greek is not a script TR scores (TR v5, docs/metrics/tr.md, Scripts):
    # the row says so, naming the script and the letters, instead of a low score for a correct render
    result = tr(poster(["Καλή όρεξη", "ΑΘΗΝΑ"], [], 5), "Καλή όρεξη ΑΘΗΝΑ")
    assert result.status == "skipped" and result.details["scripts"] == ["Greek"]
    assert {"ή", "ό"} <= set(result.details["unreadable"]) and "Greek" in result.error


def test_decorative_rings_dots_and_stars_do_not_count():
    lines = ["OPEN DAILY", "FRESH COFFEE"]
    plain = tr(poster(lines, [], 8, bg="gradient"), " ".join(lines))
    decorated = tr(poster(lines, [], 8, bg="gradient", decor=4, seed=5), " ".join(lines))
    assert plain.score == 1.0 and decorated.score == 1.0, decorated.details["recognised"]
    assert decorated.details["dropped_lines"]["glyph"] >= 1   # the glyphs were read, and dropped
