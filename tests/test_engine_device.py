"""`--device`: a GPU the machine lacks is refused naming what was found, `auto` takes the GPU only when there is one,
and run.json says which device was asked for, which was used, and where each stage ran. torch's view of the GPUs
is patched both ways, so these hold on machines with and without CUDA."""
import json
import re

import numpy as np
import pytest
import torch
from PIL import Image

from tests.support import engine_plugins
from vistar.api import StageContext, StageInput
from vistar.engine.runner import ScoreConfig, run_score
from vistar.runtime.device import DeviceUnavailable, resolve_device


def gpus(monkeypatch, names: list[str]):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: bool(names))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(names))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: names[i])
    monkeypatch.setattr(torch.version, "cuda", "12.4")


def test_cuda_without_a_gpu_is_refused_naming_what_was_found(monkeypatch):
    gpus(monkeypatch, [])
    with pytest.raises(DeviceUnavailable, match=re.escape(f"--device cuda: no CUDA device: torch {torch.__version__} (CUDA 12.4) "
                                                         "finds no GPU")):
        resolve_device("cuda")
    monkeypatch.setattr(torch.version, "cuda", None)
    with pytest.raises(DeviceUnavailable, match="is a CPU-only build"):
        resolve_device("cuda:0")
    assert resolve_device("auto") == "cpu" and resolve_device("cpu") == "cpu"


def test_auto_takes_the_gpu_when_there_is_one(monkeypatch):
    gpus(monkeypatch, ["Fake GPU A", "Fake GPU B"])
    assert resolve_device("auto") == "cuda" and resolve_device("cuda:1") == "cuda:1"
    with pytest.raises(DeviceUnavailable, match=r"--device cuda:2: 2 CUDA devices found \(cuda:0 Fake GPU A, cuda:1 Fake GPU B\)"):
        resolve_device("cuda:2")
    with pytest.raises(ValueError, match="must be cpu, cuda, cuda:N or auto, not 'gpu'"):
        resolve_device("gpu")


def scene(tmp_path):
    (tmp_path / "imgs" / "m1").mkdir(parents=True)
    Image.new("RGB", (12, 12), (9, 9, 9)).save(tmp_path / "imgs" / "m1" / "p1.png")
    (tmp_path / "p.vistar").write_text('p1: [GD|TR] "A"\n')
    return tmp_path / "imgs", tmp_path / "p.vistar"


def test_the_cli_refuses_a_missing_gpu_before_creating_the_run_folder(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from vistar.cli import app

    engine_plugins.install(monkeypatch)
    gpus(monkeypatch, [])
    imgs, prompts = scene(tmp_path)
    result = CliRunner().invoke(app, ["score", str(imgs), "--prompts", str(prompts), "--out", str(tmp_path / "run"),
                                      "--device", "cuda"])
    assert result.exit_code == 2, result.output
    assert "no CUDA device" in " ".join(result.output.split()) and not (tmp_path / "run").exists()


def test_run_json_records_the_device_asked_for_used_and_per_stage(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch)
    gpus(monkeypatch, [])
    imgs, prompts = scene(tmp_path)
    run_score(ScoreConfig(imgs, prompts, tmp_path / "run", device="auto"))
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (meta["device"], meta["device_requested"], meta["stage_devices"]) == ("cpu", "auto", {"fake_stats": "cpu"})
    assert meta["stage_precisions"] == {}   # what each torch-model stage ran in: this run has none


def test_ocr_reports_where_its_sessions_run_not_where_it_was_asked(monkeypatch):
    """provider: cuda on a run given the GPU, with an onnxruntime that has no CUDA provider: the stage ran on cpu."""
    import onnxruntime

    from vistar.features.ocr import STAGE
    from vistar.ontology import Ontology
    from vistar.runtime.device import stage_devices

    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    features = Ontology.load(None).data["features"]
    ctx = StageContext(device="cuda", features={**features, "ocr": {**features["ocr"], "provider": "cuda"}})
    STAGE.compute([StageInput(np.full((64, 64, 3), 255, np.uint8), None, {})], ctx)
    assert stage_devices(["ocr", "depth", "faces"], ctx) == {"ocr": "cpu", "depth": "cuda", "faces": "cpu"}


def test_provenance_lines_state_what_ran(tmp_path):
    from vistar.engine.runmeta import run_provenance

    def said(meta) -> list[str]:
        (tmp_path / "run.json").write_text(json.dumps(meta))
        return run_provenance(tmp_path)

    meta = {"device": "cpu", "device_requested": "auto", "stage_devices": {"ocr": "cpu", "faces": "cpu"},
            "models": {"rapidocr/PP-OCRv6_det_small": {"provider": "OpenVINO CPU f32", "note": "no native BF16"},
                       "yolov8l-seg": {"path": "x", "sha256": "0" * 64}}}
    assert said(meta) == ["Device: cpu (--device auto); stages: faces on cpu, ocr on cpu.",
                          "rapidocr/PP-OCRv6_det_small ran on OpenVINO CPU f32 (no native BF16)."]
    assert said({"device": "cuda", "device_requested": "cuda"}) == ["Device: cuda."]
    assert said({"stage_precisions": {"depth": "bf16", "clip_embed": "fp32"}}) == ["Precision: clip_embed fp32, depth bf16."]
    assert said({"stage_precisions": {"depth": "fp32"}}) == []   # fp32, the validated baseline, goes without saying
    assert said({}) == [] and said([1]) == []
    (tmp_path / "run.json").unlink()
    assert run_provenance(tmp_path) == []
