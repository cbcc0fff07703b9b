"""OCR on onnxruntime's CUDA provider against its CPU provider: speed, and TR on the validity posters.

    python benchmarks/bench_ocr_provider.py [--n 20] [--split validation] [--batch 8] [--device cuda] [--json FILE]

Renders N validity posters (vistar.validity.tr: correct, one typo, one word missing; 3 images each), runs the OCR
stage over them in batches of BATCH with `features.ocr.provider: cpu` and, on a CUDA run, `provider: cuda` (the
GPU path batches the detector by input shape, features/ocr_batched.py), and prints each provider's images/s
(after one warm-up batch) and mean TR, then the largest |ΔTR| between the two and the share of images whose TR
is equal. The CUDA provider needs onnxruntime's GPU build (`pip install 'vistar[gpu]'`, docs/performance.md#ocr-
on-the-gpu); without it, or when it fails, the CUDA row says why and the CPU row stands. `--json` writes the same, with every image's
TR per provider (what a tolerance between the two is read from).
"""
from __future__ import annotations

import json
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


def compare(rows: dict) -> dict | None:
    """CUDA against CPU, image by image, when both ran: the largest |dTR|, the share of equal TRs, the speed-up."""
    if "cuda" not in rows:
        return None
    diff = np.abs(rows["cuda"]["tr"] - rows["cpu"]["tr"])
    return {"max_abs_dtr": float(diff.max()), "equal_share": float(np.mean(diff < 1e-9)),
            "speedup": rows["cuda"]["ips"] / rows["cpu"]["ips"]}


def main() -> None:
    parser = parser_with_device(__doc__, n=20)
    parser.add_argument("--split", choices=("tuning", "hard", "photo", "coins", "validation"), default="validation")
    parser.add_argument("--json", help="write the rows, every image's TR and the comparison here")
    args = parser.parse_args()
    device = device_of(parser, args)
    cases = ladder_cases(args.n, 0, {**SPLITS, "validation": VALIDATION}[args.split])
    images = [np.asarray(case["images"][k].convert("RGB")) for case in cases for k in ("correct", "typo", "missing")]
    texts = [case["expected"] for case in cases for _ in range(3)]
    print(f"{len(images)} poster images ({args.split}), batch {args.batch}, device {device}")
    rows = {"cpu": run("cpu", device, images, texts, args.batch)}
    provider, note = onnxruntime_provider("cuda", device)
    if provider == "CUDAExecutionProvider":
        try:
            rows["cuda"] = run("cuda", device, images, texts, args.batch)
        except Exception as exc:  # noqa: BLE001 - CUDA/cuDNN libraries the provider's build expects, absent: the CPU row stands
            note = f"failed: {type(exc).__name__}: {exc}"
    if "cuda" not in rows:
        print(f"provider cuda: not run ({note})")
    for name, row in rows.items():
        print(f"provider {name:4s} (ran on {row['ran_on']}): {row['ips']:7.2f} images/s, mean TR {row['tr'].mean():.4f}")
    both = compare(rows)
    if both is not None:
        print(f"cuda vs cpu: largest |dTR| {both['max_abs_dtr']:.4f}, equal TR on {both['equal_share']:.1%} of images, "
              f"speed-up {both['speedup']:.2f}x")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": device, "split": args.split, "images": len(images), "batch": args.batch,
                       "kinds": ["correct", "typo", "missing"] * len(cases),
                       "providers": {name: {"ran_on": row["ran_on"], "images_per_s": row["ips"], "mean_tr": float(row["tr"].mean()),
                                            "tr": row["tr"].tolist()} for name, row in rows.items()},
                       "cuda_not_run": None if "cuda" in rows else note, "cuda_vs_cpu": both}, fh, indent=2)

if __name__ == "__main__":
    main()
