"""TR through the real RapidOCR on rendered text (ground truth = the string drawn), for every available font:
correct ≥ 0.9 > one-letter typo > missing word > no text ≈ 0."""
from __future__ import annotations

import numpy as np
import pytest

from vistar.api import StageContext, StageInput, parse
from vistar.engine.params import metric_params
from vistar.features.ocr import STAGE, OcrSettings, RapidOcrBackend
from vistar.metrics.tr import METRIC
from vistar.ontology import Ontology
from vistar.synth.text import available_fonts, render_text

ONTOLOGY = Ontology.load(None)
PARAMS = metric_params(ONTOLOGY, "TR")
EXPECTED = "FRESH COFFEE DAILY"
VARIANTS = {"correct": EXPECTED, "typo": "FRESH COFFEE DAIRY", "missing_word": "FRESH COFFEE", "blank": ""}


@pytest.fixture(scope="module")
def ctx():
    return StageContext(features=ONTOLOGY.data["features"])


def tr_of(image: np.ndarray, ctx: StageContext, expected: str = EXPECTED):
    [ocr] = STAGE.compute([StageInput(image, None, {"text": expected})], ctx)
    return METRIC.fn({"ocr": ocr}, {"text": expected}, PARAMS, None)


@pytest.mark.slow
@pytest.mark.parametrize("font", sorted(available_fonts()))
def test_score_ladder_on_rendered_text(font, ctx):
    path = available_fonts()[font]
    scores = {name: tr_of(np.asarray(render_text(shown, size=512, font_size=40, font=path)), ctx).score
              for name, shown in VARIANTS.items()}
    assert scores["correct"] >= 0.9, scores
    assert scores["correct"] > scores["typo"] > scores["missing_word"], scores
    assert scores["blank"] <= 0.05, scores


def test_recognised_text_and_boxes_in_details(ctx):
    image = np.asarray(render_text("GRAND OPENING", size=512, font_size=44))  # fits on one line
    result = tr_of(image, ctx, "GRAND OPENING")
    assert result.details["recognised"] == "grand opening"
    [line] = result.details["ocr_lines"]
    (x0, y0), (x1, y1) = line["box"][0], line["box"][2]
    assert 0 < x0 < 256 < x1 < 512 and 0 < y0 < 256 < y1 < 512  # the text is centred on the canvas
    assert line["confidence"] > 0.9


def test_light_text_on_dark_background(ctx):
    image = np.asarray(render_text("HANDLE WITH CARE", size=512, font_size=40, background=(40, 60, 50)))
    assert tr_of(image, ctx, "HANDLE WITH CARE").score >= 0.9


def test_two_rows_read_top_to_bottom(ctx):
    # wrapped onto two lines: the score sees them in reading order
    image = np.asarray(render_text("THE SILENT RIVER FLOWS", size=512, font_size=64))
    result = tr_of(image, ctx, "THE SILENT RIVER FLOWS")
    assert len(result.details["ocr_lines"]) >= 2 and result.score >= 0.9


def test_settings_validation():
    assert parse(OcrSettings, {"det_limit_side": 640}, "features.ocr").det_limit_side == 640
    with pytest.raises(ValueError, match=r"features.ocr.det_side: unknown parameter \(known: det_limit_side, "):
        parse(OcrSettings, {"det_side": 640}, "features.ocr")
    with pytest.raises(ValueError, match="features.ocr.det_limit_type: must be one of 'max', 'min', not 'mean'"):
        parse(OcrSettings, {"det_limit_type": "mean"}, "features.ocr")
    with pytest.raises(ValueError, match="features.ocr.use_cls: must be true or false, not 'false'"):
        parse(OcrSettings, {"use_cls": "false"}, "features.ocr")
    with pytest.raises(ValueError, match="features.ocr.det_limit_side: must be an integer, not '640'"):
        parse(OcrSettings, {"det_limit_side": "640"}, "features.ocr")     # the ontology loader makes such text a number
    assert parse(OcrSettings, ONTOLOGY.data["features"]["ocr"], "features.ocr") == OcrSettings()  # mirrors the shipped defaults


def test_rapidocr_confidence_cut_disabled():
    # lines of any confidence reach the feature; the TR metric decides (and reports) what it drops
    assert RapidOcrBackend(OcrSettings()).engine.text_score == 0.0


@pytest.mark.slow
def test_stage_is_deterministic_across_batches(ctx):
    a = np.asarray(render_text("GRAND OPENING", size=384, font_size=36))
    b = np.asarray(render_text("HANDLE WITH CARE", size=384, font_size=30, background=(40, 60, 50)))
    together = STAGE.compute([StageInput(a, None, {}), StageInput(b, None, {})], ctx)
    alone = STAGE.compute([StageInput(b, None, {})], ctx) + STAGE.compute([StageInput(a, None, {})], ctx)
    assert together == [alone[1], alone[0]]
    assert together[0].lines and together[1].lines


def test_a_failing_image_fails_alone(ctx):
    # RapidOCR cannot resize an extreme strip for its detector: that image errors, its batch-mates are read
    strip = np.full((3000, 20, 3), 255, np.uint8)
    good = np.asarray(render_text("OPEN", size=256, font_size=48))
    tiny = np.full((1, 1, 3), 255, np.uint8)
    failed, read, empty = STAGE.compute([StageInput(strip, None, {}), StageInput(good, None, {}), StageInput(tiny, None, {})], ctx)
    assert isinstance(failed, Exception) and "20×3000" in str(failed)
    assert [ln.text for ln in read.lines] == ["OPEN"]
    assert empty.lines == () and (empty.width, empty.height) == (1, 1)
