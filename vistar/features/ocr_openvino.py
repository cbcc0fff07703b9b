"""OpenVINO sessions for RapidOCR's detector and recogniser, for bf16 inference on the CPU.

Why: on CPUs with native bf16 (AVX512-BF16, AMX) OpenVINO runs PP-OCR's det/rec in bf16 at about half the
time of onnxruntime's fp32 (docs/performance.md, "TR on one CPU core"), the one lever left on one core.
OpenVINO picks bf16 *by itself* on such CPUs, so the precision is always set explicitly here: the same
setting must give the same numbers on every machine that honours it, and the precision the compiled
model really uses is recorded in run.json (a CPU without bf16 runs f32 and says so).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

PRECISIONS = {"fp32": "f32", "bf16": "bf16"}  # features.ocr.precision -> OpenVINO's inference precision hint


class OpenVinoSession:
    """Drop-in for a RapidOCR engine session: one input array in, the model's first output out."""

    def __init__(self, model_path: Path, threads: int, precision: str):
        try:
            import openvino as ov
        except ImportError as exc:
            raise RuntimeError("features.ocr.runtime: openvino needs the openvino package: "
                               "pip install 'vistar[openvino]'") from exc
        core = ov.Core()
        compiled = core.compile_model(core.read_model(str(model_path)), "CPU", {
            "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_PRECISION_HINT": PRECISIONS[precision]})
        self.precision_used = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        self.version = ov.__version__
        self._request = compiled.create_infer_request()

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return self._request.infer({0: batch})[0]


def use_openvino(engine, threads: int, precision: str) -> dict[str, str]:
    """Swap a RapidOCR engine's det/rec sessions for OpenVINO ones on the same ONNX files.

    Returns {model file stem: precision used} for provenance. RapidOCR creates its sessions lazily;
    loading them here also reads the recogniser's character list, which stays with RapidOCR's object."""
    used = {}
    for part in (engine._load_det_model(), engine._load_rec_model()):
        path = Path(part.session.session._model_path)
        part.session = OpenVinoSession(path, threads, precision)
        used[path.stem] = part.session.precision_used
    return used
