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


def test_stray_calibration_counts_words_and_other_readings(capsys):
    # bench_tr_validity's stray_angle calibration on hand-made readings: a poster word read unsurely 5° off the
    # text and photo detail read "C000" 18° off it (text lines at 8°, read surely)
    from tests.support.ocr_posters import poster, rotated

    spec = importlib.util.spec_from_file_location("bench_tr_validity", BENCH.parent / "bench_tr_validity.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ocr = poster(rotated("OPEN", 500, 480, 160, 40, 3.0, conf=0.7), rotated("C000", 500, 540, 100, 30, -10.0, conf=0.7))
    bench.stray_calibration([{"expected": "FRESH COFFEE DAILY OPEN", "ocr": {"correct": ocr}}])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("stray_angle  4.0: drops 1 readings that are words of the poster, 1 that are not")
    assert lines[3].startswith("stray_angle 10.0: drops 0 readings that are words of the poster, 1 that are not")
    assert lines[4].startswith("stray_angle 15.0: drops 0 readings that are words of the poster, 1 that are not")
