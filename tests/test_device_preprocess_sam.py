"""`subject_masks` preprocessing on the device: GroundingDINO's and SAM's image processors get uint8 tensors
already on the run's device and resize, normalise and pad there with their own (torchvision) code.

Measured on CPU: bit-identical pixel values, pixel masks and sizes to the processors fed numpy arrays, and so
bit-identical stage outputs. For reference, transformers' PIL backend (the pre-5 default, that the checkpoints'
configs were written for) differs from the torchvision one by one grey level on ≤ 1.3 % of the pixels of
300×200 to 1200×1800 storyboards (2 levels at most on uniform noise): the same antialiased triangle filter,
different fixed-point rounding. Nothing here changes that; the tests pin it.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from vistar.api import StageContext, StageInput  # noqa: E402
from vistar.features import panels, subject_masks  # noqa: E402
from vistar.features.subject_masks import processor_inputs  # noqa: E402
from vistar.prompts_dsl import parse_prompt  # noqa: E402
from vistar.synth.storyboards import make_storyboard  # noqa: E402
from vistar.synth.tiny_models import save_tiny_cse_models  # noqa: E402

SHAPES = [(512, 768), (683, 1024), (1024, 1536), (1200, 1800), (300, 200)]
STD_MIN = 0.224   # the smallest ImageNet std (0.229, 0.224, 0.225): one grey level is at most 1 / 255 / STD_MIN after normalising


def _torch_backed(name):
    cls = getattr(transformers, name)
    if getattr(cls(), "backend", None) != "torchvision":
        pytest.skip(f"{name} is not torch-backed in this transformers (needs transformers >= 5)")
    return cls()


def _boards():
    return [make_storyboard(2, 3, h, w, seed=i, subject=True).image for i, (h, w) in enumerate(SHAPES)]


@pytest.mark.parametrize("name", ["SamImageProcessor", "GroundingDinoImageProcessor"])
def test_device_inputs_give_the_processors_own_output_on_cpu(name):
    """Full-size default settings: SAM longest side 1024 padded to 1024², GroundingDINO 800 / 1333 and its mask."""
    processor = _torch_backed(name)
    images = _boards()
    pixels, kwargs = processor_inputs(images, SimpleNamespace(image_processor=processor), "cpu")
    assert kwargs == {"device": "cpu", "input_data_format": "channels_first"}
    assert all(p.dtype == torch.uint8 and p.shape == (3, *im.shape[:2]) for p, im in zip(pixels, images))
    for image, tensor in zip(images, pixels):      # one at a time: SAM takes one image per call in the stage
        ref = processor(images=[image], return_tensors="pt")
        ours = processor(images=[tensor], return_tensors="pt", **kwargs)
        assert set(ref) == set(ours)
        for key in ref:
            assert torch.equal(ref[key], ours[key]), key
    ref = processor(images=images[:2], return_tensors="pt")          # a batch (GroundingDINO pads to the largest)
    ours = processor(images=pixels[:2], return_tensors="pt", **kwargs)
    assert all(torch.equal(ref[key], ours[key]) for key in ref)


@pytest.mark.parametrize("name", ["SamImageProcessor", "GroundingDinoImageProcessor"])
def test_torchvision_and_pil_backends_differ_by_two_grey_levels_at_most(name):
    pil_cls = getattr(transformers, name + "Pil", None)
    if pil_cls is None:
        pytest.skip("needs transformers >= 5 (two image-processor backends)")
    torch_backed, pil = _torch_backed(name), pil_cls()
    for image in _boards():
        a = torch_backed(images=[image], return_tensors="pt")["pixel_values"]
        b = torch.as_tensor(np.asarray(pil(images=[image], return_tensors="pt")["pixel_values"]))
        assert a.shape == b.shape
        diff = (a - b).abs()
        assert diff.max() <= 2 / 255 / STD_MIN + 1e-5
        assert (diff > 1e-5).float().mean() < 0.02


def test_pil_backed_processor_gets_the_arrays():
    pil_cls = getattr(transformers, "SamImageProcessorPil", None)
    if pil_cls is None:
        pytest.skip("needs transformers >= 5 (two image-processor backends)")
    images = _boards()[:1]
    assert processor_inputs(images, SimpleNamespace(image_processor=pil_cls()), "cpu") == (images, {})


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return save_tiny_cse_models(tmp_path_factory.mktemp("cse-device"))


def _masks(weights, device="cpu"):
    boards = [make_storyboard(2, 3, 180, 270, seed=s, subject=True) for s in range(2)]
    controls = {"grid": "2x3", "subject": "red fox"}
    ctx = StageContext(model_paths=weights, device=device,
                       features={"subject_masks": {"box_threshold": 0.0, "text_threshold": 0.0}})
    prompt = parse_prompt("[SA|CSE] storyboard")
    items = [StageInput(b.image, prompt, controls) for b in boards]
    layouts = panels.STAGE.compute(items, ctx)
    for item, layout in zip(items, layouts):
        item.deps = {"panels": layout}
    return subject_masks.STAGE.compute(items, ctx)


def test_stage_outputs_identical_with_processing_on_cpu_arrays(weights, monkeypatch):
    device_path = _masks(weights)
    monkeypatch.setattr(subject_masks, "processor_inputs", lambda images, processor, device: (images, {}))
    arrays_path = _masks(weights)
    assert any(m.found.any() for m in device_path)
    for a, b in zip(device_path, arrays_path):
        np.testing.assert_array_equal(a.found, b.found)
        np.testing.assert_array_equal(a.boxes, b.boxes)
        np.testing.assert_array_equal(a.scores, b.scores)
        np.testing.assert_array_equal(a.masks, b.masks)
        assert a.mask_source == b.mask_source


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["SamImageProcessor", "GroundingDinoImageProcessor"])
def test_processing_on_cuda_within_one_grey_level_of_cpu(name):
    """torchvision resizes uint8 on CUDA in float and rounds; on CPU with a fixed-point kernel: ±1 level."""
    processor = _torch_backed(name)
    wrapped = SimpleNamespace(image_processor=processor)
    for image in _boards():
        pixels, kwargs = processor_inputs([image], wrapped, "cuda")
        on_gpu = processor(images=pixels, return_tensors="pt", **kwargs)
        on_cpu = processor(images=[image], return_tensors="pt")
        assert on_gpu["pixel_values"].is_cuda
        assert (on_gpu["pixel_values"].cpu() - on_cpu["pixel_values"]).abs().max() <= 1 / 255 / STD_MIN + 1e-5
        if "pixel_mask" in on_cpu:
            assert torch.equal(on_gpu["pixel_mask"].cpu(), on_cpu["pixel_mask"])


@pytest.mark.gpu
def test_stage_runs_on_cuda(weights):
    for m in _masks(weights, "cuda"):
        assert m.masks.shape == (6, 180, 270) and m.masks.dtype == bool
        assert all(m.found[k] == m.masks[k].any() for k in range(6))
