"""`vistar bench` splits a torch stage's time into its model's forward calls and the host work around them, and
`--model-scale tiny` runs every torch stage on small random models of the same architectures, in seconds."""
from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from vistar.cli import app
from vistar.engine.bench_forward import input_shapes, recording, replay_seconds
from vistar.models import provenance

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

MODEL_S, HOST_S = 0.03, 0.02


class Sleepy(torch.nn.Module):
    """A model whose forward takes MODEL_S, calling a child (nested: counted once, in the outer call)."""

    def __init__(self):
        super().__init__()
        self.child = torch.nn.Identity()

    def forward(self, x):
        time.sleep(MODEL_S)
        return self.child(x) + 1


def test_host_time_is_the_wall_time_outside_the_model_and_the_replay_is_the_model_alone():
    model = Sleepy()
    with recording([model, model.child], lambda: None) as record:
        start = time.perf_counter()
        for _ in range(2):
            time.sleep(HOST_S)             # preprocessing, say
            model(torch.zeros(3, 8, 8))
        wall = time.perf_counter() - start
    assert len(record.calls) == 2                     # the child's calls are inside the model's
    assert 2 * MODEL_S <= record.model_s < 2 * MODEL_S + 0.05
    assert 2 * HOST_S <= wall - record.model_s < 2 * HOST_S + 0.05
    assert input_shapes(record) == ["Sleepy 3x8x8"]
    assert 2 * MODEL_S <= replay_seconds(record, lambda: torch.autocast("cpu", enabled=False), lambda: None) < 2 * MODEL_S + 0.05
    model(torch.zeros(1))                             # hooks are gone after the block
    assert len(record.calls) == 2


TORCH_STAGES = {"clip_embed", "subject_masks", "dino_embed", "depth", "instances"}


@pytest.mark.slow
def test_tiny_scale_bench_reports_each_torch_stage_against_its_model(tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(provenance, "_LOADED", {})
    prompts, report = tmp_path / "p.vistar", tmp_path / "bench.json"
    prompts.write_text(
        'c1: [GD|CSE] A two-panel strip of a red fox: running, sleeping {panels=2, grid="1x2", subject="red fox", '
        'shots=["a red fox running", "a red fox sleeping"]}\n'
        "p1: [SA|PSC] a blue ball resting on a red box {objects=[\"ball\", \"box\"], contact=\"resting\"}\n")
    result = CliRunner().invoke(app, ["bench", "--prompts", str(prompts), "--n", "2", "--size", "256", "--batch-sizes", "1,2",
                                      "--repeats", "1", "--model-scale", "tiny", "--json", str(report)], terminal_width=200)
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["fingerprint"]["model_scale"] == "tiny"
    stages = {s["name"]: s for s in data["stages"]}
    assert TORCH_STAGES <= set(stages)
    for name in TORCH_STAGES:
        s = stages[name]
        assert s["status"] == "ok", (name, s["note"])
        assert s["images_per_s"] == s["throughput"][str(s["best_batch"])] > 0
        assert s["model_images_per_s"] > 0 and s["host_ms_per_image"] >= 0 and s["precision"] == "fp32"
        assert s["model_ratio"] == pytest.approx(s["images_per_s"] / s["model_images_per_s"])
    for name in set(stages) - TORCH_STAGES:   # no model to compare with
        assert stages[name]["model_images_per_s"] is None and stages[name]["host_ms_per_image"] is None
    # the replayed calls take what the checkpoints' processors make (catalogue): CLIP's 224 crop, SAM's 1024 pad,
    # DPT's 384 square, YOLO's 640 letterbox; one image per call on the CPU (`batch_invariant`)
    assert "CLIPVisionModel 1x3x224x224" in stages["clip_embed"]["model_inputs"]
    assert "SamVisionEncoder 1x3x1024x1024" in stages["subject_masks"]["model_inputs"]
    assert "DPTForDepthEstimation 1x3x384x384" in stages["depth"]["model_inputs"]
    assert "AutoBackend 1x3x640x640" in stages["instances"]["model_inputs"]
    models = data["fingerprint"]["models"]
    assert models["sam-vit-huge"]["random_init"] and models["sam-vit-huge"]["scale"] == "tiny"
    assert "torch stages vs their model alone" in result.output and "model scale tiny" in result.output


def test_tiny_scale_replaces_weights_that_exist(tmp_path, monkeypatch):
    """A tiny bench measures tiny models even where the real checkpoint is installed."""
    from transformers import AutoImageProcessor, AutoModel

    from vistar.api import RunOptions, StageContext
    from vistar.features.hf_models import load_pretrained
    from vistar.synth.tiny_models import save_tiny_dinov2

    monkeypatch.setattr(provenance, "_LOADED", {})
    path = str(save_tiny_dinov2(tmp_path / "dino"))
    ctx = StageContext(model_paths={"dinov2-large": path}, options=RunOptions(model_scale="tiny"))
    model, processor = load_pretrained("dinov2-large", ctx, AutoModel, AutoImageProcessor)
    assert model.config.image_size == 518 and model.config.hidden_size == 32   # the catalogue's tiny, not the file's
    assert provenance.loaded_models()["dinov2-large"]["scale"] == "tiny"
    with pytest.raises(ValueError, match="model_scale must be one of 'full', 'tiny', not 'small'"):
        RunOptions(model_scale="small")  # type: ignore[arg-type]
