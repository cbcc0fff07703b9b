"""The shared torch device helpers: on-device resize/normalise, deterministic setup, the precision setting,
and what they guarantee for the depth stage (fp32 bit-identical across batch sizes; bf16 within tolerance)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from PIL import Image

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.support.tiny_checkpoints import save_tiny_dpt  # noqa: E402
from vistar.api import RunOptions, StageContext, StageInput  # noqa: E402
from vistar.engine.registry import feature_stage  # noqa: E402
from vistar.prompts_dsl import parse_prompt  # noqa: E402
from vistar.runtime import device as dev  # noqa: E402
from vistar.synth.scenes import scene_pair  # noqa: E402

# bf16 autocast vs fp32 on the depth stage (docs/performance.md#pipeline): worst pixel difference as a fraction
# of the fp32 map's range, and the least Pearson correlation of the two maps.
BF16_MAX_DIFF_OF_RANGE = 0.05
BF16_MIN_CORRELATION = 0.999
GPU_BATCH_TOLERANCE = 1e-4


def _rng_image(h, w, seed):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_same_size_image_is_only_scaled_and_normalised():
    image = _rng_image(8, 6, 0)
    out = dev.images_to_tensor([image], (8, 6), mean=(0.1, 0.2, 0.3), std=(0.5, 0.25, 2.0))
    expected = (image.astype(np.float32) / 255.0 - np.array([0.1, 0.2, 0.3], np.float32)) / np.array([0.5, 0.25, 2.0], np.float32)
    assert out.shape == (1, 3, 8, 6) and out.dtype == torch.float32
    np.testing.assert_allclose(out[0].permute(1, 2, 0).numpy(), expected, atol=1e-6)


def test_downscale_matches_pillow_antialiased_bicubic():
    """torch's uint8 antialiased bicubic ports Pillow's resampling filter: an independent reference, to one grey level."""
    image = _rng_image(64, 48, 1)
    out = dev.images_to_tensor([image], (16, 24), mean=(0, 0, 0), std=(1, 1, 1))[0].permute(1, 2, 0).numpy()
    ref = np.asarray(Image.fromarray(image).resize((24, 16), Image.BICUBIC)).astype(np.float32) / 255
    assert np.abs(out - ref).max() <= 1 / 255 + 1e-6


def test_each_image_is_resized_alone_so_batch_neighbours_do_not_matter():
    images = [_rng_image(30, 20, 2), _rng_image(9, 41, 3), np.asfortranarray(_rng_image(16, 16, 4))]
    images[1].flags.writeable = False  # read-only arrays (decoded elsewhere) are copied, not aliased
    batch = dev.images_to_tensor(images, (12, 12), mean=(0.5,) * 3, std=(0.5,) * 3)
    assert batch.shape == (3, 3, 12, 12)
    for i, image in enumerate(images):
        assert torch.equal(batch[i], dev.images_to_tensor([image], (12, 12), mean=(0.5,) * 3, std=(0.5,) * 3)[0])


def test_setup_torch_once_per_run_deterministic_and_seeded(monkeypatch):
    previous = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    try:
        torch.use_deterministic_algorithms(False)
        ctx = StageContext(options=RunOptions(seed=7))
        dev.setup_torch(ctx)
        assert torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()
        assert not torch.backends.cudnn.benchmark and torch.backends.cudnn.deterministic
        assert not torch.backends.cudnn.allow_tf32 and not torch.backends.cuda.matmul.allow_tf32  # no TF32 when fp32 is asked
        with torch.backends.cudnn.flags(enabled=False):  # torch's own legacy getter must not raise about mixed TF32 flags
            pass
        drawn = torch.rand(3)
        torch.manual_seed(7)
        assert torch.equal(drawn, torch.rand(3))
        torch.manual_seed(123)
        expected = torch.rand(3)
        torch.manual_seed(123)
        dev.setup_torch(ctx)  # a second stage of the same run does not reseed mid-run
        assert torch.equal(torch.rand(3), expected)
    finally:
        torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])


def test_cublas_workspace_is_set_for_cuda_runs_only(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    dev.prepare_process("cpu")
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    dev.prepare_process("cuda:0")
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    dev.prepare_process("cuda")
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"  # the user's choice wins


@pytest.fixture(scope="module")
def tiny_dpt(tmp_path_factory):
    return str(save_tiny_dpt(tmp_path_factory.mktemp("dpt") / "dpt"))


def _images():
    return [scene_pair(0, 40, 56)[0].image, scene_pair(1, 30, 30)[1].image, scene_pair(2, 72, 48)[0].image,
            scene_pair(3, 33, 64)[1].image]


def _depth(tiny_dpt, device="cpu", **params):
    ctx = StageContext(device=device, model_paths={"dpt-hybrid-midas": tiny_dpt}, features={"depth": params})
    prompt = parse_prompt("[PH|PSC] a blue ball on a red box")
    return feature_stage("depth").compute([StageInput(im, prompt, {}) for im in _images()], ctx)


def test_depth_fp32_is_bit_identical_across_batch_sizes(tiny_dpt):
    runs = [_depth(tiny_dpt, batch_size=b) for b in (1, 2, 4)]
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            assert np.array_equal(a, b)


def test_depth_bf16_autocast_stays_within_documented_tolerance(tiny_dpt):
    fp32 = _depth(tiny_dpt, batch_size=4)
    bf16 = _depth(tiny_dpt, batch_size=4, precision="bf16")
    for a, b in zip(fp32, bf16):
        assert b.dtype == np.float32 and b.shape == a.shape
        assert not np.array_equal(a, b)  # autocast really ran in bf16
        assert np.abs(a - b).max() <= BF16_MAX_DIFF_OF_RANGE * (a.max() - a.min())
        assert np.corrcoef(a.ravel(), b.ravel())[0, 1] >= BF16_MIN_CORRELATION


@pytest.mark.gpu
def test_gpu_depth_batch_size_invariant_and_close_to_cpu(tiny_dpt):
    dev.prepare_process("cuda")
    runs = [_depth(tiny_dpt, device="cuda", batch_size=b) for b in (1, 2, 4)]
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_allclose(a, b, rtol=0, atol=GPU_BATCH_TOLERANCE * max(1.0, float(np.abs(a).max())))
    cpu = _depth(tiny_dpt, batch_size=4)
    for a, b in zip(cpu, runs[0]):  # CPU vs GPU fp32: docs/performance.md#pipeline
        assert np.abs(a - b).max() <= 1e-3 * (a.max() - a.min()) + 1e-6


def test_clip_and_dino_embeddings_bit_identical_alone_or_batched(tmp_path):
    """A storyboard's embeddings do not depend on which other storyboards share its batch, or on the chunk size."""
    from types import SimpleNamespace

    from vistar.features import clip_embed, dino_embed, panels
    from vistar.synth.storyboards import make_storyboard
    from vistar.synth.tiny_models import save_tiny_cse_models

    weights = save_tiny_cse_models(tmp_path)
    boards = [make_storyboard(2, 2, 120, 160, seed=s) for s in range(3)]
    prompt = parse_prompt("[SA|CSE] storyboard")
    controls = {"grid": "2x2", "shots": ["a red fox", "a fox running", "b", "the fox sleeps under a tree"]}
    big = StageContext(model_paths=weights, features={"clip_embed": {"batch_size": 64}, "dino_embed": {"batch_size": 64}})
    small = StageContext(model_paths=weights, features={"clip_embed": {"batch_size": 1}, "dino_embed": {"batch_size": 1}})

    def items(deps):
        return [StageInput(b.image, prompt, controls, d) for b, d in zip(boards, deps)]

    layouts = panels.STAGE.compute(items([{}] * 3), big)
    masks = []
    for k in range(3):
        m = np.zeros((4, 120, 160), bool)
        for j, (x0, y0, x1, y1) in enumerate(layouts[k].boxes):
            m[j, y0 + 5:y1 - 5 - k, x0 + 3 + j:x1 - 4] = True
        masks.append(SimpleNamespace(masks=m, found=np.array([True, k != 0, True, k != 1])))
    for stage, deps in [(clip_embed, [{"panels": lay} for lay in layouts]), (dino_embed, [{"subject_masks": m} for m in masks])]:
        together = stage.STAGE.compute(items(deps), big)
        alone = [stage.STAGE.compute([item], small)[0] for item in items(deps)]
        for a, b in zip(together, alone):
            for field in ("panel_vectors", "text_vectors", "vectors"):
                if hasattr(a, field):
                    assert np.array_equal(getattr(a, field), getattr(b, field)), (stage.STAGE.name, field)
