"""Batched OCR (the GPU path: one detector call per batch, one recogniser pass over every line of the batch) reads
what the single-image path reads, run here on the CPU provider through the same code: same text, box corners
within 1 px, confidences within 0.02 (the tolerance docs/performance.md states). Images of different sizes share
a batch; a blank image and a failing one stay per-image results."""
import numpy as np
import pytest

from vistar.api import StageContext, StageInput
from vistar.features import ocr
from vistar.features.ocr import OcrSettings, RapidOcrBackend
from vistar.features.ocr_batched import ocr_batch
from vistar.features.ocr_steps import read_one
from vistar.synth.text import render_text

pytestmark = pytest.mark.slow

TEXTS = [("GRAND OPENING", (640, 480)), ("FRESH BREAD DAILY", (512, 512)), ("NIGHT MARKET 2024", (800, 360)),
         ("OPEN 24 HOURS", (512, 512)), ("SUMMER SALE", (512, 512))]   # three of one size: one detector call


@pytest.fixture(scope="module")
def backend():
    return RapidOcrBackend(OcrSettings())


@pytest.fixture(scope="module")
def images():
    posters = [np.asarray(render_text(text, size=size, font_size=48, seed=k)) for k, (text, size) in enumerate(TEXTS)]
    blank = np.full((300, 300, 3), 240, np.uint8)
    return posters + [blank]


def _same(batched, single):
    assert [line.text for line in batched.lines] == [line.text for line in single.lines]
    for a, b in zip(batched.lines, single.lines):
        assert abs(a.confidence - b.confidence) <= 0.02
        assert np.abs(np.array(a.box) - np.array(b.box)).max() <= 1.0
    assert (batched.width, batched.height, batched.alphabet) == (single.width, single.height, single.alphabet)


def test_batched_results_equal_single_image_calls(backend, images, monkeypatch):
    single = [read_one(backend, image) for image in images]
    detector = backend.engine._load_det_model()
    shapes = []
    real = detector.session
    monkeypatch.setattr(detector, "session", lambda x: shapes.append(x.shape) or real(x))
    batched = ocr_batch(backend, images)
    # the three 512² posters in one call; the blank page, read as nothing, looks again (grey: no strokes or stripes)
    assert len(shapes) == 5 and sorted(s[0] for s in shapes) == [1, 1, 1, 1, 3]
    assert [" ".join(line.text for line in r.lines) for r in single[:5]] == [t for t, _ in TEXTS]   # real readings
    assert single[5].lines == () and batched[5].lines == ()
    for got, want in zip(batched, single):
        _same(got, want)


def test_a_failing_image_fails_alone(backend, images, monkeypatch):
    from vistar.features import ocr_steps

    real = ocr_steps.stage_image
    monkeypatch.setattr(ocr_steps, "stage_image", lambda engine, image: ValueError("bad pixels") if image.shape[0] == 360
                        else real(engine, image))
    results = ocr_batch(backend, images)
    assert isinstance(results[2], RuntimeError) and "bad pixels" in str(results[2])
    assert " ".join(line.text for line in results[0].lines) == "GRAND OPENING"


def test_the_stage_batches_only_when_the_backend_runs_on_the_gpu(backend, images, monkeypatch):
    calls = []
    from vistar.features import ocr_steps

    monkeypatch.setattr(ocr_steps, "read_one", lambda b, image: calls.append("single") or read_one(b, image))
    real_batch = ocr.ocr_batch
    monkeypatch.setattr(ocr, "ocr_batch", lambda b, imgs: calls.append("batch") or real_batch(b, imgs))
    ctx = StageContext(features={"ocr": {}})
    ctx.cache[f"ocr:{OcrSettings()}:cpu"] = backend
    inputs = [StageInput(image, None, {}, {}) for image in images[:2]]
    ocr._compute(inputs, ctx)
    assert calls == ["single", "single"]   # CPU: per image, scores independent of the batch
    calls.clear()
    monkeypatch.setattr(backend, "device", "cuda")
    ocr._compute(inputs, ctx)
    assert calls == ["batch"]
