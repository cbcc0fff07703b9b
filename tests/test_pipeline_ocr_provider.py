"""`features.ocr.provider: cuda`: onnxruntime's CUDA provider when the run has the GPU and onnxruntime has the
provider; otherwise OCR runs on the CPU, reads the same text, and run.json's model entries say why."""
from __future__ import annotations

import numpy as np
import onnxruntime
import pytest

from vistar.api import StageContext, StageInput, parse
from vistar.features.ocr import STAGE, OcrSettings
from vistar.models import provenance
from vistar.models.provenance import loaded_models
from vistar.ontology import Ontology
from vistar.runtime.device import onnxruntime_provider
from vistar.synth.text import render_text


def _providers(monkeypatch, available, device):
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: list(available))
    monkeypatch.setattr(onnxruntime, "get_device", lambda: device)


def test_cpu_is_the_default_and_needs_no_note():
    assert parse(OcrSettings, {}, "features.ocr").provider == "cpu"
    assert onnxruntime_provider("cpu", "cuda") == ("CPUExecutionProvider", None)
    with pytest.raises(ValueError, match="features.ocr.provider: must be one of 'cpu', 'cuda', not 'tensorrt'"):
        parse(OcrSettings, {"provider": "tensorrt"}, "features.ocr")


def test_cuda_needs_the_gpu_device_and_the_onnxruntime_provider(monkeypatch):
    _providers(monkeypatch, ["CUDAExecutionProvider", "CPUExecutionProvider"], "GPU")
    assert onnxruntime_provider("cuda", "cuda:0") == ("CUDAExecutionProvider", None)
    provider, note = onnxruntime_provider("cuda", "cpu")
    assert provider == "CPUExecutionProvider" and "--device cuda" in note
    _providers(monkeypatch, ["AzureExecutionProvider", "CPUExecutionProvider"], "CPU")
    provider, note = onnxruntime_provider("cuda", "cuda")
    assert provider == "CPUExecutionProvider"
    assert "CUDAExecutionProvider is not available" in note and "onnxruntime-gpu" in note and "AzureExecutionProvider" in note


def test_missing_cuda_provider_falls_back_to_cpu_reads_the_text_and_records_why(monkeypatch):
    _providers(monkeypatch, ["CPUExecutionProvider"], "CPU")
    monkeypatch.setattr(provenance, "_LOADED", {})  # only this run's loads
    features = Ontology.load(None).data["features"]
    ctx = StageContext(device="cuda", features={**features, "ocr": {**features["ocr"], "provider": "cuda"}})
    image = np.asarray(render_text("GRAND OPENING", size=512, font_size=44))
    [result] = STAGE.compute([StageInput(image, None, {})], ctx)
    assert " ".join(line.text for line in result.lines).upper() == "GRAND OPENING"
    entries = {k: v for k, v in loaded_models().items() if k.startswith("rapidocr/")}
    assert entries and all(v["provider"] == "CPUExecutionProvider" for v in entries.values())
    assert all("CUDAExecutionProvider is not available" in v["note"] for v in entries.values())
