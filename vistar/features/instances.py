"""`instances` stage: instance masks, class ids/names, confidences and boxes (`vistar.api.Instances`).

Detection sits behind the `Detector` interface: the default, YOLOv8-seg, is AGPL-3.0 (Ultralytics), so a
permissively licensed segmenter can replace it by implementing `Detector` and registering it in `DETECTORS`
(selected by the catalogue library of `features.instances.model`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from ..api import FeatureStage, Instances, StageContext, StageInput
from ..models import load_model, spec
from ..runtime import precision
from ..runtime.device import is_cuda
from ..runtime.precision import Precision


class Detector(Protocol):
    def __call__(self, images: list[np.ndarray]) -> list[Instances]: ...


class UltralyticsSegDetector:
    """YOLO segmentation checkpoint (.pt) through ultralytics; masks at full image resolution.

    `letterbox_on_device` (default: when `device` is CUDA) letterboxes on the device instead of ultralytics'
    CPU letterbox (`yolo_letterbox`); the CPU default keeps ultralytics' own letterbox, whose cv2 resize the
    device one matches only to one grey level, on the RGB arrays as they are (`RgbPredictor`)."""

    def __init__(self, weights: Path, device: str = "cpu", imgsz: int = 640, conf: float = 0.25, iou: float = 0.7,
                 max_det: int = 100, letterbox_on_device: bool | None = None):
        import os

        # never let ultralytics pip-install or phone home at run time
        os.environ.setdefault("YOLO_AUTOINSTALL", "false")
        os.environ.setdefault("YOLO_OFFLINE", "true")
        from ultralytics import YOLO

        # `weights`: a checkpoint path, or an already built YOLO (a random-initialised one for benchmarks)
        self.model = YOLO(str(weights), task="segment") if isinstance(weights, (str, Path)) else weights
        # rect=False: always letterbox to a square imgsz; with rect, same-shaped batches get tighter padding
        # than mixed ones, so detections would depend on which images share a batch
        self.kwargs = dict(imgsz=imgsz, conf=conf, iou=iou, max_det=max_det, device=device, verbose=False,
                           retina_masks=True, rect=False)
        self.batched = is_cuda(device)
        on_device = is_cuda(device) if letterbox_on_device is None else letterbox_on_device
        from .yolo_letterbox import DeviceLetterboxPredictor, RgbPredictor

        self.predictor = DeviceLetterboxPredictor if on_device else RgbPredictor   # both take RGB arrays

    def __call__(self, images: list[np.ndarray]) -> list[Instances]:
        # CPU: one image per forward, as `batch_invariant` does, so detections never depend on the batch size
        chunks = [list(images)] if self.batched else [[im] for im in images]
        results = [r for chunk in chunks for r in self._predict(chunk)]
        return [self._convert(r, im.shape[:2]) for r, im in zip(results, images)]

    def modules(self) -> list:
        """The network ultralytics' predictor runs (its AutoBackend), once a prediction has set it up."""
        predictor = getattr(self.model, "predictor", None)
        return [predictor.model] if predictor is not None else []

    def _predict(self, images: list[np.ndarray]) -> list:
        return self.model.predict(images, predictor=self.predictor, **self.kwargs)

    @staticmethod
    def _convert(result, shape: tuple[int, int]) -> Instances:
        if result.boxes is None or len(result.boxes) == 0 or result.masks is None:
            return Instances.empty(*shape)
        masks = result.masks.data.cpu().numpy() > 0.5
        if masks.shape[1:] != shape:
            raise RuntimeError(f"detector masks {masks.shape[1:]} do not match the image {shape}")
        cls = result.boxes.cls.cpu().numpy().astype(int)
        order = np.lexsort((np.arange(len(cls)), -result.boxes.conf.cpu().numpy()))  # by confidence, stable
        return Instances(masks[order], cls[order], tuple(str(result.names[int(c)]) for c in cls[order]),
                         result.boxes.conf.cpu().numpy().astype(float)[order],
                         result.boxes.xyxy.cpu().numpy().astype(float)[order])


@dataclass(frozen=True)
class InstancesParams:
    """`features.instances`."""

    model: str = "yolov8l-seg"
    imgsz: int = 640
    conf: float = 0.25        # detections below this confidence are dropped
    iou: float = 0.7          # NMS IoU
    max_det: int = 100
    precision: Precision = "auto"   # the forward pass's arithmetic (runtime/precision.py)


def _ultralytics(path: Path, ctx: StageContext, params: InstancesParams) -> Detector:
    weights = path if not isinstance(path, Path) or path.is_file() else next(iter(sorted(path.glob("*.pt"))), None)
    if weights is None:
        raise FileNotFoundError(f"{path}: no .pt checkpoint inside")
    return UltralyticsSegDetector(weights, ctx.device, params.imgsz, float(params.conf), float(params.iou), params.max_det)


# catalogue library -> detector factory (weights path, or the model `random_init` built; ctx; stage params);
# add a permissive backend here
DETECTORS: dict[str, Callable[[Path, StageContext, InstancesParams], Detector]] = {"ultralytics": _ultralytics}


def load_detector(name: str, ctx: StageContext, params: InstancesParams) -> Detector:
    library = spec(name).library
    if library not in DETECTORS:
        raise ValueError(f"model '{name}' ({library}) has no instance-detector backend (known: {sorted(DETECTORS)})")
    build = DETECTORS[library]
    return load_model(name, ctx, lambda path: build(path, ctx, params), lambda model, _: build(model, ctx, params))


def _detector_key(ctx: StageContext) -> str:
    return f"instances:{ctx.params('instances', InstancesParams).model}"


def _compute(batch: list[StageInput], ctx: StageContext) -> list[Instances]:
    params = ctx.params("instances", InstancesParams)
    detector = ctx.model(_detector_key(ctx), lambda: load_detector(params.model, ctx, params))
    with precision.compute(ctx, "instances", params.precision):
        return detector([item.image for item in batch])


def _model_modules(ctx: StageContext) -> list:
    modules = getattr(ctx.cache[_detector_key(ctx)], "modules", None)   # a backend without it: no model timing
    return modules() if modules else []


STAGE = FeatureStage(name="instances", version="yolo-seg/2", compute=_compute, models=("yolov8l-seg",),
                     params=InstancesParams, model_modules=_model_modules)
