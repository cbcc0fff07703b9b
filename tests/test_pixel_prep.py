"""Preprocessing on the run's device (features/pixel_prep.py, device.images_to_tensor) against each checkpoint's own
image processor, fed the host arrays as the stages fed it before (the catalogue's processor settings are the
checkpoints' own: CLIP ViT-L/14, DINOv2-large, SAM ViT-H, GroundingDINO-tiny, DPT-hybrid).

Largest difference measured on the CPU: none, for every processor, crop shape and batch below (the same uint8
resize kernels, the same fused normalisation), so the bound asserted is equality; the stages' outputs are therefore
the same bits with `preprocess: device` (the default) and `host`. On CUDA the resize kernels round differently:
one grey level at most, 1 / 255 / 0.224 after ImageNet normalisation (the GPU test below). For reference,
transformers' PIL backend (the pre-5 default, that the checkpoints' configs were written for) differs from the
torchvision one by up to two grey levels on ≤ 2 % of the pixels: the same antialiased filters, different
fixed-point rounding. Nothing here changes that; the test pins it.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from vistar.api import StageContext, StageInput  # noqa: E402
from vistar.features import clip_embed, dino_embed, panels, subject_masks  # noqa: E402
from vistar.features.dino_embed import masked_crop  # noqa: E402
from vistar.features.hf_models import EmbedParams  # noqa: E402
from vistar.features.pixel_prep import centre_crops, masked_square, on_host, padded  # noqa: E402
from vistar.features.subject_masks import _scaled  # noqa: E402
from vistar.models.random_init import build_random  # noqa: E402
from vistar.prompts_dsl import parse_prompt  # noqa: E402
from vistar.runtime.device import images_to_tensor, pixels_to_device  # noqa: E402
from vistar.synth.storyboards import make_storyboard  # noqa: E402
from vistar.synth.tiny_models import save_tiny_cse_models  # noqa: E402

SHAPES = [(512, 768), (683, 1024), (1024, 1536), (1200, 1800), (300, 200)]
STD_MIN = 0.224   # the smallest ImageNet std (0.229, 0.224, 0.225): one grey level is at most 1 / 255 / STD_MIN after normalising


def _image_processor(name: str):
    """The checkpoint's image processor as the catalogue describes it (what `--random-init` builds)."""
    _, processor = build_random(name, device="meta")
    image_processor = getattr(processor, "image_processor", processor)
    if getattr(image_processor, "backend", None) != "torchvision":
        pytest.skip("needs transformers >= 5 (torch-backed image processors)")
    return processor, image_processor


def _boards():
    return [make_storyboard(2, 3, h, w, seed=i, subject=True).image for i, (h, w) in enumerate(SHAPES)]


def _crops(image):
    """Panel-like views: a wide, a tall, a small (below CLIP's 224 crop: padded), a whole-image crop, and a second
    wide one of the first's shape (same-shaped views are resized in one call)."""
    h, w = image.shape[:2]
    return [(0, 0, w // 2, h // 3), (w // 3, 0, w // 2, h), (5, 7, 150, 120), (0, 0, w, h),
            (w // 2, h // 3, 2 * (w // 2), 2 * (h // 3))]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["clip-vit-large-patch14", "dinov2-large"])
def test_centre_crops_equal_the_processor_on_host_crops(name):
    _, ip = _image_processor(name)
    for image in _boards():
        boxes = _crops(image)
        pixels = pixels_to_device(image, "cpu")
        ours = centre_crops([pixels[:, y0:y1, x0:x1] for x0, y0, x1, y1 in boxes], ip)
        ref = ip(images=[image[y0:y1, x0:x1] for x0, y0, x1, y1 in boxes], return_tensors="pt")["pixel_values"]
        assert ours.shape == ref.shape and ours.is_contiguous()
        assert torch.equal(ours, ref)


def test_clips_text_half_alone_equals_the_processor():
    processor, _ = _image_processor("clip-vit-large-patch14")
    texts = ["a smiling paper coffee cup mascot waving hello", "fox"]
    kwargs = dict(padding="max_length", truncation=True, max_length=77, return_tensors="pt")
    ref, ours = processor(text=texts, **kwargs), processor.tokenizer(texts, **kwargs)
    assert set(ref) == set(ours) and all(torch.equal(ref[k], ours[k]) for k in ref)


def test_clip_tokens_cached_per_text_equal_the_batch_tokenised_at_once():
    processor, _ = _image_processor("clip-vit-large-patch14")
    calls = []

    def tokenizer(texts, **kwargs):
        calls.append(list(texts))
        return processor.tokenizer(texts, **kwargs)

    kwargs = dict(padding="max_length", truncation=True, max_length=77, return_tensors="pt")
    cache: dict = {}
    first = ["a red fox running", "a red fox asleep", "a red fox running"]
    second = ["a red fox asleep", "fox " * 100]   # one text seen before, one truncated
    for texts in (first, second):
        ours, ref = clip_embed._tokens(texts, tokenizer, 77, cache, "cpu"), processor.tokenizer(texts, **kwargs)
        assert set(ours) == set(ref) and all(torch.equal(ours[k], ref[k]) for k in ref)
    assert calls == [["a red fox running", "a red fox asleep"], ["fox " * 100]]   # each distinct text once


@pytest.mark.slow
def test_masked_square_equals_dinos_host_masked_crop():
    _, ip = _image_processor("dinov2-large")
    fill = np.round(np.asarray(ip.image_mean) * 255).astype(np.uint8)
    rng = np.random.default_rng(0)
    for image in _boards():
        h, w = image.shape[:2]
        for y0, x0, y1, x1 in [(10, 20, 200, 90), (0, 0, h, w), (h - 30, w // 2, h, w)]:
            mask = np.zeros((h, w), bool)
            mask[y0:y1, x0:x1] = rng.random((y1 - y0, x1 - x0)) < 0.7    # holes: the fill shows through
            square = masked_square(pixels_to_device(image, "cpu"), mask, fill)
            host = masked_crop(image, mask, fill)
            assert torch.equal(square.permute(1, 2, 0), torch.from_numpy(host))
            planar = pixels_to_device(image, "cpu").contiguous()   # a (3, H, W) tensor given as it is (vistar.Scorer)
            assert torch.equal(masked_square(planar, mask.astype(np.uint8), fill), square)
            assert torch.equal(centre_crops([square], ip), ip(images=[host], return_tensors="pt")["pixel_values"])
    with pytest.raises(ValueError, match="empty mask"):
        masked_square(pixels_to_device(image, "cpu"), np.zeros((h, w), bool), fill)


@pytest.mark.slow
def test_sam_inputs_and_boxes_equal_the_processor():
    processor, ip = _image_processor("sam-vit-huge")
    images = _boards()
    values, _, sizes = padded([pixels_to_device(im, "cpu") for im in images], ip, pad_to=(1024, 1024))
    assert values.is_contiguous(memory_format=torch.channels_last)   # the CPU's layout: the processor's values in it
    for i, image in enumerate(images):
        h, w = image.shape[:2]
        boxes = np.array([[10.5, 20.0, w / 2, h / 3], [0, 0, w, h]])
        ref = processor(images=image, input_boxes=[boxes.tolist()], return_tensors="pt")
        assert torch.equal(values[i:i + 1], ref["pixel_values"])
        assert sizes[i] == tuple(ref["reshaped_input_sizes"][0].tolist())
        assert torch.equal(torch.as_tensor(_scaled(boxes, (h, w), sizes[i])), ref["input_boxes"][0])


@pytest.mark.slow
def test_grounding_dino_inputs_equal_the_processor_for_a_mixed_batch():
    processor, ip = _image_processor("grounding-dino-tiny")
    images, text = _boards()[:3], ["red fox.", "a small grey cat.", "fox."]
    values, mask, _ = padded([pixels_to_device(im, "cpu") for im in images], ip)
    ref = processor(images=images, text=text, padding="longest", return_tensors="pt")
    assert torch.equal(values, ref["pixel_values"]) and torch.equal(mask, ref["pixel_mask"])
    tokens = processor(text=text, padding="longest", return_tensors="pt")   # the text alone, as the stage asks
    assert all(torch.equal(tokens[k], ref[k]) for k in tokens)
    for image in images:   # one image a call (the CPU's way): nothing padded, the mask a broadcast 1 of the same value
        values, mask, _ = padded([pixels_to_device(image, "cpu")], ip)
        ref = processor(images=[image], text=text[:1], return_tensors="pt")
        assert torch.equal(values, ref["pixel_values"]) and torch.equal(mask, ref["pixel_mask"])
        assert mask.stride() == (0, 0, 0)


def test_depth_input_equals_dpts_processor():
    """The depth stage's settings (square image_size, bicubic, mean = std = 0.5) in DPT's own processor."""
    from transformers import DPTImageProcessor
    from transformers.image_utils import PILImageResampling

    ip = DPTImageProcessor(size={"height": 384, "width": 384}, resample=PILImageResampling.BICUBIC, keep_aspect_ratio=False,
                           image_mean=[0.5] * 3, image_std=[0.5] * 3)
    images = _boards()
    ours = images_to_tensor(images, (384, 384), mean=(0.5,) * 3, std=(0.5,) * 3)
    assert torch.equal(ours, ip(images=images, return_tensors="pt")["pixel_values"])


def test_a_pil_backed_processor_or_the_option_runs_the_processor_itself():
    pil = getattr(transformers, "SamImageProcessorPil", None)
    _, torch_backed = _image_processor("sam-vit-huge")
    assert StageContext().params("clip_embed", EmbedParams).preprocess == "device"   # the default
    assert not on_host("device", torch_backed)
    assert on_host("host", torch_backed)
    if pil is not None:
        assert on_host("device", torch_backed, pil())
    with pytest.raises(ValueError, match="features.clip_embed.preprocess: must be one of 'device', 'host', not 'gpu'"):
        StageContext(features={"clip_embed": {"preprocess": "gpu"}}).params("clip_embed", EmbedParams)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SamImageProcessor", "GroundingDinoImageProcessor"])
def test_torchvision_and_pil_backends_differ_by_two_grey_levels_at_most(name):
    pil_cls = getattr(transformers, name + "Pil", None)
    if pil_cls is None:
        pytest.skip("needs transformers >= 5 (two image-processor backends)")
    torch_backed, pil = getattr(transformers, name)(), pil_cls()
    for image in _boards():
        a = torch_backed(images=[image], return_tensors="pt")["pixel_values"]
        b = torch.as_tensor(np.asarray(pil(images=[image], return_tensors="pt")["pixel_values"]))
        assert a.shape == b.shape
        diff = (a - b).abs()
        assert diff.max() <= 2 / 255 / STD_MIN + 1e-5
        assert (diff > 1e-5).float().mean() < 0.02


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return save_tiny_cse_models(tmp_path_factory.mktemp("cse-device"))


def _cse(weights, preprocess: str, device: str = "cpu"):
    """subject_masks, then dino_embed and clip_embed on two 2x3 storyboards with PREPROCESS."""
    boards = [make_storyboard(2, 3, 180, 270, seed=s, subject=True) for s in range(2)]
    controls = {"grid": "2x3", "subject": "red fox", "shots": ["a red fox running", "a red fox asleep"]}
    options = {"preprocess": preprocess}
    ctx = StageContext(model_paths=weights, device=device, features={
        "subject_masks": {"box_threshold": 0.0, "text_threshold": 0.0, **options}, "dino_embed": options,
        "clip_embed": options})
    prompt = parse_prompt("[SA|CSE] storyboard")
    items = [StageInput(b.image, prompt, controls) for b in boards]
    for item, layout in zip(items, panels.STAGE.compute(items, ctx)):
        item.deps = {"panels": layout}
    masks = subject_masks.STAGE.compute(items, ctx)
    for item, m in zip(items, masks):
        item.deps["subject_masks"] = m
    return masks, dino_embed.STAGE.compute(items, ctx), clip_embed.STAGE.compute(items, ctx)


@pytest.mark.slow
def test_stage_outputs_identical_with_the_processors_on_host_arrays(weights):
    (device_masks, device_dino, device_clip), (host_masks, host_dino, host_clip) = _cse(weights, "device"), _cse(weights, "host")
    assert any(m.found.any() for m in device_masks) and any(m.found.sum() >= 2 for m in device_masks)
    for a, b in zip(device_masks, host_masks):
        np.testing.assert_array_equal(a.found, b.found)
        np.testing.assert_array_equal(a.boxes, b.boxes)
        np.testing.assert_array_equal(a.scores, b.scores)
        np.testing.assert_array_equal(a.masks, b.masks)
        assert a.mask_source == b.mask_source
    for a, b in zip(device_dino, host_dino):
        np.testing.assert_array_equal(a.vectors, b.vectors)
    for a, b in zip(device_clip, host_clip):
        np.testing.assert_array_equal(a.panel_vectors, b.panel_vectors)
        np.testing.assert_array_equal(a.text_vectors, b.text_vectors)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["sam-vit-huge", "grounding-dino-tiny"])
def test_processing_on_cuda_within_one_grey_level_of_cpu(name):
    """torchvision resizes uint8 on CUDA in float and rounds; on CPU with a fixed-point kernel: ±1 level."""
    processor, ip = _image_processor(name)
    for image in _boards():
        on_gpu = padded([pixels_to_device(image, "cuda")], ip, pad_to=(1024, 1024) if "sam" in name else None)
        on_cpu = padded([pixels_to_device(image, "cpu")], ip, pad_to=(1024, 1024) if "sam" in name else None)
        assert on_gpu[0].is_cuda and on_gpu[2] == on_cpu[2]
        assert (on_gpu[0].cpu() - on_cpu[0]).abs().max() <= 1 / 255 / STD_MIN + 1e-5
        assert torch.equal(on_gpu[1].cpu(), on_cpu[1])


@pytest.mark.gpu
def test_stage_runs_on_cuda(weights):
    masks, dino, clip = _cse(weights, "device", "cuda")
    for m in masks:
        assert m.masks.shape == (6, 180, 270) and m.masks.dtype == bool
        assert all(m.found[k] == m.masks[k].any() for k in range(6))
