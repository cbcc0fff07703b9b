"""OCR feature stage: recognised text lines with boxes and confidences, behind an `OcrBackend` interface.

The default backend is RapidOCR (PP-OCRv6 det/rec ONNX models ship inside its wheel, so it runs offline).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..engine.registry import FeatureStage, StageContext, StageInput
from ..models.provenance import record_loaded


@dataclass(frozen=True)
class OcrLine:
    text: str
    confidence: float
    box: tuple[tuple[float, float], ...]  # 4 corner points (x, y), clockwise from top-left

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        xs, ys = [p[0] for p in self.box], [p[1] for p in self.box]
        return min(xs), min(ys), max(xs), max(ys)


@dataclass(frozen=True)
class OcrResult:
    lines: tuple[OcrLine, ...]
    width: int
    height: int


class OcrBackend(Protocol):
    name: str

    def __call__(self, image: np.ndarray) -> list[OcrLine]: ...


class RapidOcrBackend:
    """RapidOCR on onnxruntime, pinned to `threads` intra-op threads so latency is reproducible."""

    name = "rapidocr"

    def __init__(self, threads: int = 1, det_limit_side: int = 736):
        import logging
        from pathlib import Path

        import rapidocr
        from rapidocr import RapidOCR

        self.engine = RapidOCR(params={
            "Global.log_level": "error",
            "Det.limit_side_len": det_limit_side,
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        })
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)  # "no text found" is a result here, not a warning
        for onnx in sorted((Path(rapidocr.__file__).parent / "models").glob("*.onnx")):
            record_loaded(f"rapidocr/{onnx.stem}", onnx)

    def __call__(self, image: np.ndarray) -> list[OcrLine]:
        out = self.engine(image)
        if out is None or out.txts is None:
            return []
        return [OcrLine(str(t), float(s), tuple((float(x), float(y)) for x, y in np.asarray(b).tolist()))
                for t, s, b in zip(out.txts, out.scores, out.boxes)]


def _compute(batch: list[StageInput], ctx: StageContext) -> list[OcrResult]:
    params = ctx.params("ocr")
    backend = ctx.model("ocr", lambda: RapidOcrBackend(threads=int(params.get("threads", 1)),
                                                       det_limit_side=int(params.get("det_limit_side", 736))))
    return [OcrResult(tuple(backend(item.image)), item.image.shape[1], item.image.shape[0]) for item in batch]


STAGE = FeatureStage(name="ocr", version="rapidocr-3.10/1", compute=_compute, models=("rapidocr",))
