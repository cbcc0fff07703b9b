"""OCR on onnxruntime's CUDA provider against its CPU provider: speed, and TR on the validity posters.

    python benchmarks/bench_ocr_provider.py [--n 20] [--split validation] [--batch 8] [--device cuda]

Renders N validity posters (vistar.validity.tr: correct, one typo, one word missing; 3 images each), runs the OCR
stage over them in batches of BATCH with `features.ocr.provider: cpu` and, on a CUDA run, `provider: cuda` (the
GPU path batches the detector by input shape, features/ocr_batched.py), and prints each provider's images/s
(after one warm-up batch) and mean TR, then the largest |ΔTR| between the two and the share of images whose TR
is equal. The CUDA provider needs onnxruntime's GPU build (`pip install 'vistar[gpu]'`, docs/performance.md#ocr-
on-the-gpu); without it the CUDA row says why and only the CPU runs.
"""
from __future__ import annotations

import time

import numpy as np
from device_args import device_of, parser_with_device

from vistar.api import StageContext, StageInput
from vistar.engine.params import metric_params
from vistar.features.ocr import STAGE
from vistar.metrics.tr import METRIC
from vistar.ontology import Ontology
from vistar.runtime.device import onnxruntime_provider
from vistar.validity.tr import VALIDATION, ladder_cases
from vistar.validity.tr_tuning import SPLITS


def run(provider: str, device: str, images: list, texts: list[str], batch: int) -> dict:
    ontology = Ontology.load(None)
    features = ontology.data["features"]
    ctx = StageContext(device=device, features={**features, "ocr": {**features["ocr"], "provider": provider}})
    inputs = [StageInput(im, None, {}) for im in images]
    STAGE.compute(inputs[:batch], ctx)   # warm-up: sessions, cuDNN's kernels
    start = time.perf_counter()
    results = [r for i in range(0, len(inputs), batch) for r in STAGE.compute(inputs[i:i + batch], ctx)]
    seconds = time.perf_counter() - start
    params = metric_params(ontology, METRIC)
    scores = np.array([METRIC.fn({"ocr": r}, {"text": t}, params, None).score or 0.0 if not isinstance(r, Exception) else 0.0
                       for r, t in zip(results, texts)])
    return {"ips": len(images) / seconds, "tr": scores, "ran_on": ctx.stage_devices.get("ocr", "cpu")}


def main() -> None:
    parser = parser_with_device(__doc__, n=20)
    parser.add_argument("--split", choices=("tuning", "hard", "photo", "coins", "validation"), default="validation")
    args = parser.parse_args()
    device = device_of(parser, args)
    cases = ladder_cases(args.n, 0, {**SPLITS, "validation": VALIDATION}[args.split])
    images = [np.asarray(case["images"][k].convert("RGB")) for case in cases for k in ("correct", "typo", "missing")]
    texts = [case["expected"] for case in cases for _ in range(3)]
    print(f"{len(images)} poster images ({args.split}), batch {args.batch}, device {device}")
    rows = {"cpu": run("cpu", device, images, texts, args.batch)}
    provider, note = onnxruntime_provider("cuda", device)
    if provider == "CUDAExecutionProvider":
        rows["cuda"] = run("cuda", device, images, texts, args.batch)
    else:
        print(f"provider cuda: not run ({note})")
    for name, row in rows.items():
        print(f"provider {name:4s} (ran on {row['ran_on']}): {row['ips']:7.2f} images/s, mean TR {row['tr'].mean():.4f}")
    if "cuda" in rows:
        diff = np.abs(rows["cuda"]["tr"] - rows["cpu"]["tr"])
        print(f"cuda vs cpu: largest |dTR| {diff.max():.4f}, equal TR on {np.mean(diff < 1e-9):.1%} of images, "
              f"speed-up {rows['cuda']['ips'] / rows['cpu']['ips']:.2f}x")


if __name__ == "__main__":
    main()
