"""TR latency per 1024×1024 image on ONE CPU thread — OCR and scoring timed separately — and the accuracy
each OCR setting keeps. Prints a table; asserts nothing (speed targets are numbers, not test failures).

    python benchmarks/bench_tr.py                 # the shipped defaults, 7 runs per image
    python benchmarks/bench_tr.py --sweep         # also the alternatives measured in docs/performance.md
    python benchmarks/bench_tr.py --components    # raw detector / recogniser ONNX cost by input size

Process pinned to one core (sched_setaffinity), onnxruntime/OpenCV/BLAS to one thread. Latency = median
over images × runs of wall time; "cpu" = thread CPU time (less sensitive to other load on a shared machine).
Accuracy = mean / min TR on rendered text whose ground truth is known: 3 phrases × fonts × 3 text heights,
plus a 33-word paragraph × fonts × 2 small text heights.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

PHRASES = ["GRAND OPENING", "FRESH COFFEE DAILY", "The Silent River: a novel by Ana Ruiz"]
TEXT_HEIGHTS = (12, 24, 64)  # font size in px on a 1024² canvas: fine print, caption, headline
PARAGRAPH = ("Join us this Saturday for the grand opening of our new bakery on Main Street with free coffee fresh "
             "bread live music and a raffle for the whole family starting at nine in the morning")
PARAGRAPH_HEIGHTS = (14, 18)  # dense body text: rows close together, the case where a small detector merges rows
SWEEP = [  # (label, features.ocr overrides)
    ("rapidocr default (min side 736, cls)", {"det_limit_type": "min", "det_limit_side": 736, "use_cls": True}),
    ("min side 736, no cls", {"det_limit_type": "min", "det_limit_side": 736}),
    ("max side 960", {"det_limit_side": 960}),
    ("max side 736", {"det_limit_side": 736}),
    ("max side 640", {"det_limit_side": 640}),
    ("max side 512", {"det_limit_side": 512}),
    ("max side 384", {"det_limit_side": 384}),
    ("max side 640, rec batch 1", {"det_limit_side": 640, "rec_batch_size": 1}),
    ("openvino fp32", {"runtime": "openvino"}),
    ("openvino bf16", {"runtime": "openvino", "precision": "bf16"}),
]


def pin_one_core() -> int:
    import cv2

    cv2.setNumThreads(1)
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def accuracy_set(size: int):
    from vistar.synth.text import available_fonts, render_text

    cases = [(p, h) for p in PHRASES for h in TEXT_HEIGHTS] + [(PARAGRAPH, h) for h in PARAGRAPH_HEIGHTS]
    return [(text, np.asarray(render_text(text, size=size, font_size=h * size // 1024, font=path)))
            for text, h in cases for path in available_fonts().values()]


def timing_set(size: int):
    from vistar.synth.text import render_text

    return [(p, np.asarray(render_text(p, size=size, font_size=64 * size // 1024))) for p in PHRASES]


def measure(settings, images, runs: int, acc_images) -> dict:
    from vistar.api import OcrResult
    from vistar.engine.params import metric_params
    from vistar.features.ocr import RapidOcrBackend
    from vistar.metrics.tr import METRIC
    from vistar.ontology import Ontology

    params = metric_params(Ontology.load(None), "TR")
    backend = RapidOcrBackend(settings)
    backend(images[0][1])  # warm-up: session creation and first-run allocations are not per-image cost
    wall, cpu, score_us = [], [], []
    for _ in range(runs):
        for text, image in images:
            t0, c0 = time.perf_counter(), time.thread_time()
            lines = backend(image)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.thread_time() - c0)
            feats = {"ocr": OcrResult(tuple(lines), image.shape[1], image.shape[0])}
            t0 = time.perf_counter()
            METRIC.fn(feats, {"text": text}, params, None)
            score_us.append((time.perf_counter() - t0) * 1e6)
    scores = []
    for text, image in acc_images:
        feats = {"ocr": OcrResult(tuple(backend(image)), image.shape[1], image.shape[0])}
        scores.append(METRIC.fn(feats, {"text": text}, params, None).score)
    return {"ocr_ms": 1e3 * statistics.median(wall), "ocr_cpu_ms": 1e3 * statistics.median(cpu),
            "score_us": statistics.median(score_us), "tr_mean": float(np.mean(scores)), "tr_min": float(np.min(scores))}


def components(runs: int, extra: list[str], console) -> None:
    """Detector and recogniser sessions alone (random input: cost depends on shape, not content)."""
    from pathlib import Path

    import onnxruntime as ort
    import rapidocr
    from rich.table import Table

    models = Path(rapidocr.__file__).parent / "models"
    det, rec = models / "PP-OCRv6_det_small.onnx", models / "PP-OCRv6_rec_small.onnx"
    rng = np.random.default_rng(0)

    def cpu_ms(path, shape, level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL) -> float:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads, opts.graph_optimization_level = 1, 1, level
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        feed = {sess.get_inputs()[0].name: rng.standard_normal(shape, dtype=np.float32)}
        return median_cpu_ms(lambda: sess.run(None, feed))

    def openvino_ms(path, shape, precision) -> float:
        from vistar.features.ocr_openvino import OpenVinoSession

        session, x = OpenVinoSession(path, 1, precision), rng.standard_normal(shape, dtype=np.float32)
        return median_cpu_ms(lambda: session(x))

    def median_cpu_ms(call) -> float:
        """Thread CPU ms of `call`, median of `runs` after one untimed call (allocations, first-run set-up)."""
        call()
        times = []
        for _ in range(runs):
            c0 = time.thread_time()
            call()
            times.append(time.thread_time() - c0)
        return 1e3 * statistics.median(times)

    table = Table(title=f"ONNX sessions alone, 1 thread, median cpu ms of {runs} runs")
    for col in ("model", "input", "graph optimisation", "ms"):
        table.add_column(col, justify="right" if col == "ms" else "left")
    for side in (320, 384, 512, 640, 736, 1024):
        table.add_row(det.name, f"1×3×{side}×{side}", "all", f"{cpu_ms(det, (1, 3, side, side)):.1f}")
    for batch, width in ((1, 160), (1, 320), (1, 640), (3, 320), (6, 320)):
        table.add_row(rec.name, f"{batch}×3×48×{width}", "all", f"{cpu_ms(rec, (batch, 3, 48, width)):.1f}")
    for name, level in (("disabled", ort.GraphOptimizationLevel.ORT_DISABLE_ALL), ("basic", ort.GraphOptimizationLevel.ORT_ENABLE_BASIC),
                        ("extended", ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)):
        table.add_row(det.name, "1×3×512×512", name, f"{cpu_ms(det, (1, 3, 512, 512), level):.1f}")
        table.add_row(rec.name, "1×3×48×320", name, f"{cpu_ms(rec, (1, 3, 48, 320), level):.1f}")
    for precision in ("fp32", "bf16"):  # the same files on OpenVINO (features.ocr.runtime: openvino)
        for path, shape in ((det, (1, 3, 512, 512)), (rec, (1, 3, 48, 320))):
            table.add_row(path.name, "×".join(map(str, shape)), f"openvino {precision}", f"{openvino_ms(path, shape, precision):.1f}")
    for path in extra:  # e.g. int8 variants made with onnxruntime.quantization (docs/performance.md)
        is_det = "det" in Path(path).name
        shape = (1, 3, 512, 512) if is_det else (1, 3, 48, 320)
        table.add_row(Path(path).name, "×".join(map(str, shape)), "all", f"{cpu_ms(path, shape):.1f}")
    console.print(table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7, help="timed runs per image (median taken)")
    ap.add_argument("--size", type=int, default=1024, help="square image side in px")
    ap.add_argument("--sweep", action="store_true", help="also measure the alternative OCR settings")
    ap.add_argument("--components", action="store_true", help="time the detector and recogniser sessions alone")
    ap.add_argument("--extra-model", action="append", default=[], metavar="ONNX",
                    help="with --components: also time this det/rec model file (name containing 'det' = detector)")
    args = ap.parse_args()

    from rich.console import Console
    from rich.table import Table

    from vistar.api import parse
    from vistar.features.ocr import OcrSettings
    from vistar.ontology import Ontology

    console = Console(width=120)
    cpu = pin_one_core()
    if args.components:
        components(args.runs, args.extra_model, console)
        return
    defaults = (Ontology.load(None).data.get("features") or {}).get("ocr") or {}
    configs = [("shipped defaults", defaults)] + ([(label, {**defaults, **o}) for label, o in SWEEP] if args.sweep else [])
    images, acc = timing_set(args.size), accuracy_set(args.size)
    table = Table(title=f"TR per {args.size}×{args.size} image, 1 thread on cpu {cpu}, median of {args.runs} runs × {len(images)} images")
    for col in ("setting", "OCR ms (wall)", "OCR ms (cpu)", "scoring µs", f"TR mean (n={len(acc)})", "TR min"):
        table.add_column(col, justify="left" if col == "setting" else "right")
    for label, params in configs:
        settings = parse(OcrSettings, params, "features.ocr")
        r = measure(settings, images, args.runs, acc)
        table.add_row(label, f"{r['ocr_ms']:.0f}", f"{r['ocr_cpu_ms']:.0f}", f"{r['score_us']:.0f}",
                      f"{r['tr_mean']:.3f}", f"{r['tr_min']:.3f}")
        console.print(f"done: {label}", style="dim")
    console.print(table)


if __name__ == "__main__":
    main()
