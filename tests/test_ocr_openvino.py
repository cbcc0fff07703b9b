"""OCR on OpenVINO: fp32 reads what onnxruntime reads, bf16 still reads rendered text, the precision a run really
used is recorded (on CPUs with and without native bf16: the capability list is patched both ways), and invalid
combinations are refused before any image is read."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from vistar.api import parse
from vistar.engine.params import metric_params
from vistar.features import ocr_openvino
from vistar.features.ocr import OcrSettings, RapidOcrBackend
from vistar.features.ocr_openvino import OpenVinoSession
from vistar.metrics.tr import METRIC
from vistar.models.provenance import clear_loaded, loaded_models
from vistar.ontology import Ontology
from vistar.synth.text import available_fonts, render_text

PHRASES = ("FRESH COFFEE DAILY", "Open 24/7 - Call 555-0199", "The Silent River")
PARAMS = metric_params(Ontology.load(None), "TR")


def images():
    fonts = list(available_fonts().values())
    return [(text, np.asarray(render_text(text, size=640, font_size=size, font=fonts[i % len(fonts)])))
            for i, (text, size) in enumerate((t, s) for t in PHRASES for s in (28, 56))]


def tr(backend, text, image):
    from vistar.api import OcrResult

    ocr = OcrResult(tuple(backend(image)), image.shape[1], image.shape[0])
    return METRIC.fn({"ocr": ocr}, {"text": text}, PARAMS, None).score


def compute_precisions(session: OpenVinoSession) -> set[str]:
    """Precisions the compiled model's convolutions run in, read here from its executed graph."""
    ops = session.compiled.get_runtime_model().get_ordered_ops()
    return {op.get_rt_info()["runtimePrecision"].astype(str) for op in ops
            if op.get_rt_info()["layerType"].astype(str) == "Convolution"}


@pytest.mark.parametrize("params, message", [
    ({"precision": "bf16"}, "needs runtime: openvino"),
    ({"runtime": "openvino", "provider": "cuda"}, "runs on the CPU"),
    ({"runtime": "tensorrt"}, "features.ocr.runtime: must be one of 'onnxruntime', 'openvino', not 'tensorrt'"),
    ({"runtime": "openvino", "precision": "int8"}, "features.ocr.precision: must be one of 'fp32', 'bf16', not 'int8'"),
])
def test_invalid_combinations_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        parse(OcrSettings, params, "features.ocr")


@pytest.mark.slow
def test_fp32_reads_the_same_lines_as_onnxruntime():
    reference = RapidOcrBackend(OcrSettings())
    openvino = RapidOcrBackend(OcrSettings(runtime="openvino"))
    for _, image in images():
        a, b = reference(image), openvino(image)
        assert [line.text for line in a] == [line.text for line in b]
        for la, lb in zip(a, b):
            assert np.abs(np.subtract(la.box, lb.box)).max() <= 1.0
            assert abs(la.confidence - lb.confidence) < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("native_bf16", [True, False])
def test_bf16_still_reads_rendered_text_and_records_the_precision_used(monkeypatch, native_bf16):
    """Whatever this CPU is: with BF16 in the capability list bf16 is asked for and what the compiled graph runs
    is recorded (bf16 where OpenVINO can, natively or emulated); without it f32 is asked for, runs, and a note
    says why. Never the request copied into run.json."""
    capabilities = ["WINOGRAD", "FP32", "INT8", "BIN", "EXPORT_IMPORT"] + (["BF16"] if native_bf16 else [])
    monkeypatch.setattr(ocr_openvino, "cpu_capabilities", lambda core: capabilities)
    clear_loaded()
    backend = RapidOcrBackend(OcrSettings(runtime="openvino", precision="bf16"))
    scores = [tr(backend, text, image) for text, image in images()]
    assert min(scores) >= 0.95, scores
    sessions = {"rapidocr/PP-OCRv6_det_small": backend.engine._load_det_model().session,
                "rapidocr/PP-OCRv6_rec_small": backend.engine._load_rec_model().session}
    entries = {name: entry for name, entry in loaded_models().items() if name.startswith("rapidocr/")}
    assert set(entries) == set(sessions)
    for name, session in sessions.items():
        ran = compute_precisions(session)
        assert len(ran) == 1 and entries[name]["provider"] == f"OpenVINO CPU {next(iter(ran))}"
        assert entries[name]["ops_by_precision"][next(iter(ran))] >= 50  # the convolutions, counted by the engine
        hint = session.compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        if native_bf16:
            assert "note" not in entries[name]
        else:
            assert hint == "f32" and entries[name]["provider"] == "OpenVINO CPU f32"
            assert "lists no native BF16" in entries[name]["note"] and "FP32" in entries[name]["note"]


def test_missing_openvino_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino -> ImportError
    with pytest.raises(RuntimeError, match=r"pip install 'vistar\[openvino\]'"):
        OpenVinoSession(tmp_path / "det.onnx", 1, "bf16")
