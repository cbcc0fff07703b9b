"""The `instances` stage's letterbox on the device (used on CUDA) against ultralytics' own CPU letterbox.

Measured (CPU, synthetic scenes and uniform noise, 40² to 1024×1536 into 128 to 640): identical shapes and
padding; resized pixels differ by at most one grey level (cv2's fixed-point bilinear vs torch's float one,
both rounded to whole levels), on ≤ 1.2 % of the pixels of smooth scenes and ≤ 13 % of noise. A tiny
YOLOv8-seg then gives the same detections either way: identical where the image needs no resize (padding only);
where it is resized, every detection away from the confidence threshold has its counterpart (152 checked:
boxes within 0.01 px, confidences within 1e-4, ≥ 98 % of mask pixels agreeing). The asserted tolerances
leave headroom for other CPUs' low bits.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ultralytics")

from ultralytics.data.augment import LetterBox  # noqa: E402

from vistar.features.instances import UltralyticsSegDetector  # noqa: E402
from vistar.features.yolo_letterbox import (  # noqa: E402
    PAD_VALUE,
    DeviceLetterboxPredictor,
    RgbPredictor,
    letterbox_geometry,
    letterbox_to_tensor,
)
from vistar.synth.scenes import scene_pair  # noqa: E402

LEVEL = 1 / 255
_BIG = pytest.mark.slow   # a rendered scene this large takes seconds to draw
SHAPES = [pytest.param(1024, 1024, 640, marks=_BIG), pytest.param(768, 1024, 640, marks=_BIG),
          pytest.param(1024, 1536, 640, marks=_BIG), (300, 200, 640), (48, 64, 128), (40, 40, 128), (96, 160, 160), (1, 300, 128)]


def _image(h, w, kind, seed=0):
    if kind == "noise" or h < 8:
        return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    return np.ascontiguousarray(scene_pair(seed, h, w)[0].image)


@pytest.mark.parametrize("h,w,size", SHAPES)
@pytest.mark.parametrize("kind", ["scene", "noise"])
def test_letterbox_matches_ultralytics(h, w, size, kind):
    image = _image(h, w, kind)
    box = LetterBox((size, size), auto=False, stride=32)
    params = box.get_params({"img": image})
    ref = torch.from_numpy(box(image=image)).permute(2, 0, 1).float() / 255
    ours = letterbox_to_tensor([image], (size, size), "cpu")[0]
    nh, nw, top, left = letterbox_geometry((h, w), (size, size))
    assert ours.shape == ref.shape == (3, size, size)
    assert (nw, nh) == params["new_unpad"] and (top, left) == (params["top"], params["left"])
    inside = torch.zeros(size, size, dtype=torch.bool)
    inside[top:top + nh, left:left + nw] = True
    assert torch.all(ours[:, ~inside] == PAD_VALUE / 255) and torch.all(ref[:, ~inside] == PAD_VALUE / 255)
    diff = (ours - ref).abs()
    assert diff.max() <= LEVEL + 1e-6
    assert diff.mean() <= (0.15 if kind == "noise" else 0.02) * LEVEL


def _sensitive_tiny_yolo(folder: Path) -> Path:
    """A tiny YOLOv8-seg whose detections depend on the image. With ultralytics' own initialisation a random
    tiny model's signal dies out in depth and it returns the same boxes for every image, which would make the
    comparison vacuous; convolutions get He-style normal weights and zero biases (the DFL's fixed bin weights
    stay)."""
    import ultralytics
    import yaml
    from ultralytics import YOLO

    cfg = yaml.safe_load((Path(ultralytics.__file__).parent / "cfg/models/v8/yolov8-seg.yaml").read_text())
    cfg.update(nc=3, scales={"t": [0.33, 0.0625, 64]}, scale="t")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny-seg.yaml").write_text(yaml.safe_dump(cfg))
    torch.manual_seed(0)
    yolo = YOLO(str(folder / "tiny-seg.yaml"), task="segment")
    for name, module in yolo.model.named_modules():
        if isinstance(module, torch.nn.Conv2d) and "dfl" not in name:
            fan_in = module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
            torch.nn.init.normal_(module.weight, std=(3 / fan_in) ** 0.5)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
    yolo.save(str(folder / "tiny-seg.pt"))
    return folder / "tiny-seg.pt"


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return _sensitive_tiny_yolo(tmp_path_factory.mktemp("yolo"))


CONF, CONF_TOL = 0.505, 1e-3


def _detectors(weights, device="cpu"):
    kwargs = {"device": device, "imgsz": 160, "conf": CONF, "max_det": 30}
    return (UltralyticsSegDetector(weights, letterbox_on_device=False, **kwargs),
            UltralyticsSegDetector(weights, letterbox_on_device=True, **kwargs))


def _box_iou(a, b):
    lt, rb = np.maximum(a[:, None, :2], b[None, :, :2]), np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.clip(rb - lt, 0, None).prod(-1)
    area = lambda x: (x[:, 2:] - x[:, :2]).prod(-1)  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None] - inter)


def _assert_agree(cpu_path, device_path):
    """Each detection not within CONF_TOL of the threshold (it may fall on either side) has a counterpart in the
    other path: same class, box IoU ≥ 0.9, confidence within CONF_TOL, ≥ 97 % of the image's mask pixels
    agreeing; ≥ 90 % of them within 0.05 px. (The random model returns duplicate boxes with different masks,
    so a counterpart is the best of the candidates, not the nearest box.)"""
    close = total = 0
    for a, b in zip(cpu_path, device_path):
        for x, y in ((a, b), (b, a)):
            iou = _box_iou(x.boxes, y.boxes) if len(y) else np.zeros((len(x), 0))
            for i in np.flatnonzero(np.abs(x.confidences - CONF) > CONF_TOL):
                cands = np.flatnonzero((y.class_ids == x.class_ids[i]) & (iou[i] >= 0.9)
                                       & (np.abs(y.confidences - x.confidences[i]) <= CONF_TOL))
                assert len(cands), f"detection {i} ({x.confidences[i]:.4f}) has no counterpart"
                assert max((y.masks[j] == x.masks[i]).mean() for j in cands) >= 0.97
                close += int(np.abs(y.boxes[cands] - x.boxes[i]).max(1).min() <= 0.05)
                total += 1
    assert total and close >= 0.9 * total


@pytest.mark.slow
def test_device_letterbox_detections_identical_without_resize(weights):
    cpu_path, device_path = _detectors(weights)
    images = [scene_pair(s, h, w)[0].image for s in range(2) for h, w in [(96, 160), (160, 64)]]  # padding only
    a, b = cpu_path(images), device_path(images)
    assert sum(len(x) for x in a) > 0
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.boxes, y.boxes)
        np.testing.assert_array_equal(x.confidences, y.confidences)
        np.testing.assert_array_equal(x.masks, y.masks)
        assert x.class_names == y.class_names


@pytest.mark.slow
def test_device_letterbox_detections_agree_when_resized(weights):
    cpu_path, device_path = _detectors(weights)
    images = [scene_pair(s, h, w)[0].image for s in range(3) for h, w in [(48, 64), (120, 200), (300, 300), (1024, 768)]]
    a, b = cpu_path(images), device_path(images)
    assert all(x.masks.shape[1:] == im.shape[:2] for x, im in zip(b, images))   # back in original coordinates
    _assert_agree(a, b)


def test_device_letterbox_is_the_cuda_default(weights):
    assert UltralyticsSegDetector(weights, "cpu").predictor is RgbPredictor
    if torch.cuda.is_available():
        assert UltralyticsSegDetector(weights, "cuda").predictor is DeviceLetterboxPredictor


@pytest.mark.slow
def test_cpu_rgb_path_gives_ultralytics_own_detections_bit_for_bit(weights):
    """The CPU default skips ultralytics' BGR round trip; ultralytics' own predictor on BGR arrays is the reference."""
    from ultralytics import YOLO

    detector, _ = _detectors(weights)
    reference = YOLO(str(weights), task="segment")
    images = [scene_pair(s, h, w)[0].image for s in range(2) for h, w in [(96, 160), (300, 300), (1024, 768)]]
    found = 0
    for image in images:
        [ours] = detector([image])
        [theirs] = reference.predict([np.ascontiguousarray(image[..., ::-1])], **detector.kwargs)
        theirs = UltralyticsSegDetector._convert(theirs, image.shape[:2])
        np.testing.assert_array_equal(ours.boxes, theirs.boxes)
        np.testing.assert_array_equal(ours.confidences, theirs.confidences)
        np.testing.assert_array_equal(ours.masks, theirs.masks)
        found += len(ours)
    assert found > 0


@pytest.mark.gpu
def test_device_letterbox_on_cuda_agrees_with_ultralytics_letterbox(weights):
    cpu_path, device_path = _detectors(weights, "cuda")
    images = [scene_pair(s, h, w)[0].image for s in range(3) for h, w in [(120, 200), (1024, 768)]]
    _assert_agree(cpu_path(images), device_path(images))


def test_cpu_detections_do_not_depend_on_the_batch(weights, monkeypatch):
    """On the CPU each image goes through its own forward (oneDNN's summation order follows the batch size),
    so an image's detections are the same bits alone or among others."""
    detector, _ = _detectors(weights)
    calls = []
    predict = detector.model.predict
    monkeypatch.setattr(detector.model, "predict", lambda images, **k: calls.append(len(images)) or predict(images, **k))
    images = [scene_pair(s, 120, 160)[0].image for s in range(5)]
    together, alone = detector(images), [detector([im])[0] for im in images]
    assert calls == [1] * 10 and sum(len(x) for x in together) > 0
    for x, y in zip(together, alone):
        np.testing.assert_array_equal(x.boxes, y.boxes)
        np.testing.assert_array_equal(x.masks, y.masks)
