"""Random-initialised stand-ins have the full size of the checkpoints they replace (same FLOPs in benchmarks).

Expected sizes are the published parameter counts of each checkpoint (model cards / papers / torchvision's
weight tables), not numbers read back from our catalogue. Transformers and torchvision models are built on the
meta device: the structure without the memory.
"""
import pytest
import torch

from vistar.models import catalog
from vistar.models.random_init import build_random

# name -> (published parameter count, relative tolerance of the published rounding)
PUBLISHED = {
    "clip-vit-large-patch14": (428e6, 0.005),     # openai/clip-vit-large-patch14: 428M
    "dinov2-large": (304e6, 0.005),               # facebook/dinov2-large: 304M (ViT-L/14)
    "sam-vit-huge": (641e6, 0.005),               # facebook/sam-vit-huge: 641M
    "dpt-hybrid-midas": (123e6, 0.01),            # Intel/dpt-hybrid-midas: 123M
    "grounding-dino-tiny": (172e6, 0.005),        # IDEA-Research/grounding-dino-tiny: 172M
    "resnet18-imagenet": (11_689_512, 0.0),       # torchvision ResNet18_Weights.IMAGENET1K_V1: 11,689,512 exactly
}


def _count(model) -> int:
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_full_size_on_meta_device(name):
    model, _ = build_random(name, device="meta")
    expected, tol = PUBLISHED[name]
    assert abs(_count(model) - expected) <= tol * expected + 0.5, _count(model)
    allocated = sum(p.numel() for p in model.parameters() if not p.is_meta)
    assert allocated <= 1e-4 * _count(model)   # only legacy `torch.Tensor(...)` parameters ignore the meta device


@pytest.mark.slow
def test_yolov8l_seg_full_size():
    yolo, processor = build_random("yolov8l-seg")   # ultralytics builds on the CPU (a stride-probing forward)
    assert processor is None
    assert abs(_count(yolo.model) - 46.0e6) <= 0.05e6   # Ultralytics docs: YOLOv8l-seg 46.0M params (rounded)
    assert yolo.task == "segment" and len(yolo.names) == 80


def test_efficientnet_lite0_full_size():
    net, processor = build_random("efficientnet-lite0")
    assert processor is None
    assert abs(_count(net) - 4.7e6) <= 0.05e6   # TensorFlow's EfficientNet-Lite table: lite0 4.7M params (rounded)


def test_every_torch_checkpoint_has_a_random_init_entry():
    missing = {n for n, s in catalog().items() if not s.random_init}
    # FER's architecture lives inside its weight file and runs in numpy on the CPU; the person detector is an
    # OpenCV DNN graph, not torch; detoxify is an optional extra
    assert missing == {"fer-mini-xception", "ssd-mobilenet-v2-coco", "detoxify-original"}


def test_seeded_and_leaves_the_global_generator_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    a, _ = build_random("resnet18-imagenet", seed=0)
    assert torch.equal(torch.rand(3), expected_next)
    b, _ = build_random("resnet18-imagenet", seed=0)
    c, _ = build_random("resnet18-imagenet", seed=1)
    assert torch.equal(a.conv1.weight, b.conv1.weight)
    assert not torch.equal(a.conv1.weight, c.conv1.weight)


def test_offline_clip_processor_pads_like_the_checkpoint():
    model, processor = build_random("clip-vit-large-patch14", device="meta")
    tokens = processor(text=["a red cat on a mat", "Ünïcode ✓ 42"], padding="max_length", truncation=True,
                       max_length=77, return_tensors="pt")["input_ids"]
    assert tokens.shape == (2, 77)
    assert int(tokens.max()) < model.config.text_config.vocab_size
    pixels = processor(images=[torch.zeros(300, 200, 3, dtype=torch.uint8).numpy()], return_tensors="pt")["pixel_values"]
    assert pixels.shape == (1, 3, 224, 224)


def test_offline_grounding_dino_processor():
    model, processor = build_random("grounding-dino-tiny", device="meta")
    x = processor(images=[torch.zeros(300, 200, 3, dtype=torch.uint8).numpy()], text=["a wooden chair."], return_tensors="pt")
    assert int(x["input_ids"].max()) < model.config.text_config.vocab_size
    assert x["pixel_values"].shape[-2:] == (1200, 800)   # shortest side 800, as the checkpoint's processor


def test_unknown_entry():
    with pytest.raises(KeyError, match="fer-mini-xception"):
        build_random("fer-mini-xception")
