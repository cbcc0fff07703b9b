"""Loaders fall back to random weights only when the weight is missing AND the run asks for it; `run_score`
refuses the option (random weights give meaningless scores); provenance says random_init with no sha256."""
from dataclasses import replace

import numpy as np
import pytest
import torch

from vistar.api import RunOptions, StageContext
from vistar.engine.runner import ScoreConfig, run_score
from vistar.features import padim
from vistar.features.depth import load_depth_model
from vistar.features.hf_models import load_pretrained
from vistar.models import MissingWeightError, provenance

RANDOM = RunOptions(random_init=True)


@pytest.fixture(autouse=True)
def no_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(provenance, "_LOADED", {})


def test_missing_weight_still_raises_without_the_option():
    from transformers import AutoImageProcessor, AutoModel

    with pytest.raises(MissingWeightError, match="dinov2-large"):
        load_pretrained("dinov2-large", StageContext(device="meta"), AutoModel, AutoImageProcessor)
    with pytest.raises(MissingWeightError, match="dpt-hybrid-midas"):
        load_depth_model("dpt-hybrid-midas", StageContext(device="meta"))
    with pytest.raises(MissingWeightError, match="resnet18-imagenet"):
        padim.load_backbone({}, padim.BackboneConfig())
    assert provenance.loaded_models() == {}


def test_transformers_loader_builds_random_full_size_and_records_it():
    from transformers import AutoImageProcessor, AutoModel

    ctx = StageContext(device="meta", options=replace(RANDOM, seed=7))
    model, processor = load_pretrained("dinov2-large", ctx, AutoModel, AutoImageProcessor, "bfloat16")
    assert model.config.hidden_size == 1024 and model.config.num_hidden_layers == 24
    assert next(model.parameters()).dtype == torch.bfloat16
    assert processor.crop_size == {"height": 224, "width": 224}
    assert provenance.loaded_models()["dinov2-large"] == {"path": None, "sha256": None, "random_init": True, "seed": 7,
                                                          "builder": "transformers"}


def test_depth_loader_random():
    depth = load_depth_model("dpt-hybrid-midas", StageContext(device="meta", options=RANDOM))
    assert depth.size == (384, 384) and depth.model.config.is_hybrid
    assert provenance.loaded_models()["dpt-hybrid-midas"]["random_init"] is True


def test_padim_random_backbone_runs_and_is_not_mistaken_for_a_checkpoint():
    config = padim.BackboneConfig(input_size=64, channels=20, pool=2)
    backbone = padim.load_backbone({}, config, "cpu", RANDOM)
    assert backbone.weights_sha256 == padim.RANDOM_ID
    feats = backbone([np.full((40, 50, 3), 128, np.uint8)])
    assert feats.shape == (1, 20, 8, 8)   # layer-1 grid of a 64 px input (stride 4), pooled by 2
    assert provenance.loaded_models()["resnet18-imagenet"]["sha256"] is None


def test_run_score_refuses_random_init(tmp_path):
    images, prompts = tmp_path / "images", tmp_path / "p.vistar"
    (images / "m").mkdir(parents=True)
    prompts.write_text("p1: [PH|LI] three wooden blocks on a floor, low light from the left\n")
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="random_init"):
        run_score(ScoreConfig(images, prompts, out, options=RANDOM))
    assert not out.exists()   # refused before anything was written
