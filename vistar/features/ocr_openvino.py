"""OpenVINO sessions for RapidOCR's detector and recogniser, for bf16 inference on the CPU.

Why: on CPUs with native bf16 (AVX512-BF16, AMX) OpenVINO runs PP-OCR's det/rec in bf16 at about half the
time of onnxruntime's fp32 (docs/performance.md, "TR on one CPU core"), the one lever left on one core.
OpenVINO picks bf16 *by itself* on such CPUs, so the precision is always set explicitly here: the same
setting must give the same numbers on every machine that honours it. bf16 is asked for only where the CPU lists
native BF16 in OpenVINO's OPTIMIZATION_CAPABILITIES: elsewhere OpenVINO may still compile bf16 (emulated on
AVX-512 CPUs, slower than f32), so f32 is asked for and a note says why. What is recorded in run.json is the
precision the compiled model's operations actually run in (its runtime model), never the request.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

PRECISIONS = {"fp32": "f32", "bf16": "bf16"}  # features.ocr.precision -> OpenVINO's inference precision hint
_COMPUTE_OPS = {"Convolution", "GroupConvolution", "MatMul", "FullyConnected", "Deconvolution"}


def cpu_capabilities(core) -> list[str]:
    """OpenVINO's OPTIMIZATION_CAPABILITIES of the CPU (`BF16` there: native bf16, AVX512-BF16 or AMX)."""
    return list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))


def ops_by_precision(compiled) -> dict[str, int]:
    """How many of the compiled model's compute operations (convolutions, matrix products) run in each precision,
    read from its runtime (executed) graph: e.g. PP-OCR's detector in bf16 runs 83 convolutions in bf16 and its
    2 deconvolutions in f32."""
    found: Counter = Counter()
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        if "layerType" in info and info["layerType"].astype(str) in _COMPUTE_OPS and "runtimePrecision" in info:
            found[info["runtimePrecision"].astype(str)] += 1
    return dict(sorted(found.items()))


def main_precision(ops: dict[str, int], compiled) -> str:
    """The precision most compute operations run in (the compiled INFERENCE_PRECISION_HINT if none is listed)."""
    if not ops:
        return compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
    return max(sorted(ops), key=ops.get)


class OpenVinoSession:
    """Drop-in for a RapidOCR engine session: one input array in, the model's first output out."""

    def __init__(self, model_path: Path, threads: int, precision: str):
        try:
            import openvino as ov
        except ImportError as exc:
            raise RuntimeError("features.ocr.runtime: openvino needs the openvino package: "
                               "pip install 'vistar[openvino]'") from exc
        core = ov.Core()
        self.model_path = Path(model_path)
        hint, self.note = PRECISIONS[precision], None
        capabilities = cpu_capabilities(core)
        if hint == "bf16" and "BF16" not in capabilities:
            hint = "f32"
            self.note = (f"precision bf16 asked for; this CPU lists no native BF16 (OpenVINO capabilities: "
                         f"{', '.join(capabilities)}), so the OCR runs f32")
        self.compiled = core.compile_model(core.read_model(str(model_path)), "CPU", {
            "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_PRECISION_HINT": hint})
        self.ops_by_precision = ops_by_precision(self.compiled)
        self.precision_used = main_precision(self.ops_by_precision, self.compiled)
        self.version = ov.__version__
        self._request = self.compiled.create_infer_request()

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return self._request.infer({0: batch})[0]


def use_openvino(engine, threads: int, precision: str) -> dict[str, OpenVinoSession]:
    """Swap a RapidOCR engine's det/rec sessions for OpenVINO ones on the same ONNX files.

    Returns {model file stem: its OpenVINO session} for provenance. RapidOCR creates its sessions lazily;
    loading them here also reads the recogniser's character list, which stays with RapidOCR's object."""
    used = {}
    for part in (engine._load_det_model(), engine._load_rec_model()):
        path = Path(part.session.session._model_path)
        part.session = used[path.stem] = OpenVinoSession(path, threads, precision)
    return used
