"""`features.ocr.provider`: `auto` (the default) takes onnxruntime's CUDA provider when the run has the GPU and
onnxruntime has the provider, `cuda` asks for it on any run; otherwise OCR runs on the CPU, reads the same text,
and run.json's model entries say why. The provider is in the row keys as it resolves (CPU keys as before `auto`)."""
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


def test_auto_is_the_default_and_a_cpu_run_needs_no_note():
    assert parse(OcrSettings, {}, "features.ocr").provider == "auto"
    assert Ontology.load(None).data["features"]["ocr"]["provider"] == "auto"
    assert onnxruntime_provider("auto", "cpu") == ("CPUExecutionProvider", None)
    assert onnxruntime_provider("cpu", "cuda") == ("CPUExecutionProvider", None)
    with pytest.raises(ValueError, match="features.ocr.provider: must be one of 'auto', 'cpu', 'cuda', not 'tensorrt'"):
        parse(OcrSettings, {"provider": "tensorrt"}, "features.ocr")


def test_cuda_needs_the_gpu_device_and_the_onnxruntime_provider(monkeypatch):
    _providers(monkeypatch, ["CUDAExecutionProvider", "CPUExecutionProvider"], "GPU")
    for asked in ("auto", "cuda"):
        assert onnxruntime_provider(asked, "cuda:0") == ("CUDAExecutionProvider", None)
    provider, note = onnxruntime_provider("cuda", "cpu")
    assert provider == "CPUExecutionProvider" and "--device cuda" in note
    assert onnxruntime_provider("auto", "cpu") == ("CPUExecutionProvider", None)
    _providers(monkeypatch, ["AzureExecutionProvider", "CPUExecutionProvider"], "CPU")
    for asked in ("auto", "cuda"):
        provider, note = onnxruntime_provider(asked, "cuda")
        assert provider == "CPUExecutionProvider"
        assert "CUDAExecutionProvider is not available" in note and "onnxruntime-gpu" in note and "AzureExecutionProvider" in note


def test_the_note_says_how_to_get_the_gpu_build(monkeypatch):
    """onnxruntime-gpu installs the same module as the CPU build: installed before it, the CPU build's files win."""
    import importlib.metadata

    _providers(monkeypatch, ["CPUExecutionProvider"], "CPU")
    real = importlib.metadata.version

    def without_gpu(name):
        if name == "onnxruntime-gpu":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", without_gpu)
    assert "pip install 'vistar[gpu]', then pip install --force-reinstall --no-deps onnxruntime-gpu" in onnxruntime_provider("auto", "cuda")[1]
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "1.31.1" if name == "onnxruntime-gpu" else real(name))
    note = onnxruntime_provider("auto", "cuda")[1]
    assert "onnxruntime-gpu is installed, but the CPU build's files are in place" in note
    assert note.endswith("pip install --force-reinstall --no-deps onnxruntime-gpu")


def test_row_keys_hash_the_provider_that_runs(monkeypatch):
    """`auto` on a CPU run hashes as the `cpu` the ontology said before; a CUDA run with the provider as `cuda`."""
    from vistar.engine.plan import resolve_scorer

    def signature(provider, device):
        onto = Ontology.load(None)
        onto.data["features"] = {**onto.data["features"], "ocr": {**onto.data["features"]["ocr"], "provider": provider}}
        scorer = resolve_scorer("TR", onto, device=device)
        assert scorer.metric is not None, scorer.unavailable
        return scorer.signature

    _providers(monkeypatch, ["CPUExecutionProvider"], "CPU")
    assert signature("auto", "cpu") == signature("cpu", "cpu") == signature("auto", "cuda") == signature("cpu", "cuda")
    _providers(monkeypatch, ["CUDAExecutionProvider", "CPUExecutionProvider"], "GPU")
    assert signature("auto", "cuda") == signature("cuda", "cuda") != signature("cpu", "cuda")
    assert signature("auto", "cpu") == signature("cpu", "cpu")
    assert STAGE.key_params({"runtime": "openvino", "provider": "auto"}, "cuda")["provider"] == "cpu"   # OpenVINO: CPU


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
