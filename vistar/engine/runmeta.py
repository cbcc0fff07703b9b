"""Run metadata for `run.json`: what was run, with which software, on which hardware."""
from __future__ import annotations

import importlib.metadata as md
import json
import os
import platform
import sys
from pathlib import Path

from ..atomic import write_text_atomic

_PACKAGES = ("vistar", "numpy", "pillow", "pyarrow", "rapidocr", "onnxruntime", "rapidfuzz", "torch",
             "transformers", "ultralytics", "mediapipe", "opencv-python-headless", "numba", "triton")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            continue
    return out


def hardware() -> dict:
    info = {"platform": platform.platform(), "machine": platform.machine(), "processor": platform.processor(),
            "cpu_count": os.cpu_count()}
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        info["memory_gib"] = round(pages * page_size / 2**30, 1)
    except (ValueError, OSError):
        pass
    if "torch" in sys.modules:  # only report a GPU if this run imported torch anyway
        torch = sys.modules["torch"]
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    return info


def write_json_atomic(path: str | Path, payload: dict) -> None:
    write_text_atomic(path, json.dumps(payload, indent=2, sort_keys=True, default=str))
