"""`features.<stage>.precision` (runtime/precision.py): what each setting runs as on each device, the context it
gives the forward pass, the typed field every torch stage declares (a bad value exits 2 as any typed parameter
does: tests/test_params_typed.py), and how it enters row keys (CPU fp32 keys as before `auto`;
any other precision moves them)."""
from __future__ import annotations

import pytest

from vistar.api import StageContext
from vistar.engine.plan import resolve_scorer
from vistar.engine.registry import feature_stage
from vistar.features.depth import DepthParams
from vistar.ontology import Ontology
from vistar.runtime import precision

torch = pytest.importorskip("torch")

TORCH_STAGES = ("clip_embed", "depth", "dino_embed", "instances", "subject_masks")


@pytest.mark.parametrize("value, device, ran", [
    ("auto", "cpu", "fp32"), ("auto", "cuda", "fp32"), ("fp32", "cuda:1", "fp32"), ("tf32", "cpu", "fp32"),
    ("tf32", "cuda", "tf32"), ("bf16", "cpu", "bf16"), ("fp16", "cuda", "fp16")])
def test_each_setting_resolves_for_the_device(value, device, ran):
    assert precision.resolve(value, "depth", device) == ran


def test_auto_on_cuda_takes_the_measured_default_and_cpu_stays_fp32(monkeypatch):
    monkeypatch.setattr(precision, "CUDA_DEFAULTS", {"clip_embed": "bf16"})
    assert precision.resolve("auto", "clip_embed", "cuda") == "bf16"
    assert precision.resolve("auto", "clip_embed", "cpu") == "fp32"
    assert precision.resolve("auto", "depth", "cuda") == "fp32"       # not measured: fp32
    assert precision.resolve("fp32", "clip_embed", "cuda") == "fp32"  # one switch away


@pytest.mark.parametrize("stage", TORCH_STAGES)
def test_every_torch_stage_declares_a_typed_precision_defaulting_to_auto(stage):
    declared = feature_stage(stage)
    assert declared.model_modules is not None
    assert precision.setting(StageContext(), declared) == "auto"
    assert precision.setting(StageContext(features={stage: {"precision": "tf32"}}), declared) == "tf32"
    with pytest.raises(ValueError, match=rf"features\.{stage}\.precision: must be one of 'auto', 'fp32', 'tf32', "
                                         r"'bf16', 'fp16', not 'half'"):
        StageContext(features={stage: {"precision": "half"}}).params(stage, declared.params)


def test_compute_context_casts_bf16_and_leaves_fp32_and_tf32_in_fp32():
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    for value, dtype in [("fp32", torch.float32), ("tf32", torch.float32), ("bf16", torch.bfloat16), ("auto", torch.float32)]:
        params = StageContext(features={"depth": {"precision": value}}).params("depth", DepthParams)
        with precision.compute(StageContext(), "depth", params.precision):
            assert (x @ w).dtype == dtype


def test_tf32_is_switched_on_inside_the_block_only():
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    with precision.compute(StageContext(device="cuda"), "depth", "tf32"):
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


def test_run_json_records_what_each_torch_stage_ran_in():
    stages = [feature_stage(name) for name in ("panels", "depth", "clip_embed")]
    ctx = StageContext(device="cpu", features={"clip_embed": {"precision": "bf16"}, "depth": {"precision": "tf32"}})
    assert precision.stage_precisions(stages, ctx) == {"depth": "fp32", "clip_embed": "bf16"}   # panels: no model


def _signature(features: dict, device: str) -> str:
    onto = Ontology.load(None)
    onto.data["features"] = {**onto.data["features"], **features}
    scorer = resolve_scorer("CSE", onto, device=device)
    assert scorer.metric is not None, scorer.unavailable
    return scorer.signature


def test_row_keys_carry_the_precision_and_cpu_fp32_keys_do_not_move(monkeypatch):
    base = Ontology.load(None).data["features"]
    auto = {"clip_embed": {**base["clip_embed"], "precision": "auto"}}
    explicit = {"clip_embed": {**base["clip_embed"], "precision": "fp32"}}
    # `auto` on a CPU runs fp32 and hashes as the explicit fp32 of earlier ontologies: a rerun reuses old rows
    assert _signature(auto, "cpu") == _signature(explicit, "cpu") == _signature(explicit, "cuda")
    assert _signature(auto, "cuda") == _signature(explicit, "cuda")   # no measured CUDA default yet
    assert _signature({"clip_embed": {**base["clip_embed"], "precision": "tf32"}}, "cpu") == _signature(explicit, "cpu")
    bf16 = _signature({"clip_embed": {**base["clip_embed"], "precision": "bf16"}}, "cpu")
    assert bf16 != _signature(explicit, "cpu")
    monkeypatch.setattr(precision, "CUDA_DEFAULTS", {"clip_embed": "bf16", "subject_masks": "bf16"})
    assert _signature(auto, "cuda") == _signature({"clip_embed": {**base["clip_embed"], "precision": "bf16"}}, "cuda")
    assert _signature(auto, "cpu") == _signature(explicit, "cpu")
    # a stage with no precision in the ontology: its measured CUDA default still enters the key
    assert precision.key_params("subject_masks", {"dtype": "float32"}, "cuda") == {"dtype": "float32", "precision": "bf16"}
    assert precision.key_params("subject_masks", {"dtype": "float32"}, "cpu") == {"dtype": "float32"}
