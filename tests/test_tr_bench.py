"""benchmarks/bench_tr.py keeps working (it is run by hand; this only checks it measures what it says)."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np

from vistar.features.ocr import OcrSettings
from vistar.synth.text import render_text

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_tr.py"


def test_measure_reports_latency_and_accuracy(monkeypatch):
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # the bench sets them; undo after
        monkeypatch.setenv(var, os.environ.get(var, "")) if var in os.environ else monkeypatch.delenv(var, raising=False)
    spec = importlib.util.spec_from_file_location("bench_tr", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    image = ("OPEN", np.asarray(render_text("OPEN", size=256, font_size=48)))
    blank = ("SALE", np.asarray(render_text("", size=256)))
    r = bench.measure(OcrSettings(), [image], runs=2, acc_images=[image, blank])
    assert r["ocr_ms"] > 0 and r["ocr_cpu_ms"] > 0 and r["score_us"] > 0
    assert (r["tr_mean"], r["tr_min"]) == (0.5, 0.0)  # "OPEN" read exactly, nothing read on the blank
