"""Each torch stage at fp32, TF32, bf16 and fp16: speed, effect on the scores, and the CUDA default it implies.

    python benchmarks/bench_precision.py [--n 24] [--size 1024] [--device cuda] [--batch 8]
                                         [--precisions fp32,tf32,bf16,fp16] [--model-scale full|tiny] [--json FILE]

N synthetic SIZE² images of the core suite's CV prompts (round-robin over TR, LI, CSE, CPA, PSC, GC), random-initialised
models where weights are missing. For each torch stage and precision (the others in fp32): the stage's images/s and
its model's alone at batch BATCH, and per angle the largest |Δscore| and Kendall's τ against the all-fp32 scores
(vistar/engine/bench_precision.py). Prints the table and the `CUDA_DEFAULTS` the rule picks (the fastest setting
inside the tolerance printed with it), to paste into vistar/runtime/precision.py once a GPU has measured it. On a
CPU, TF32 runs as fp32 (its row must show no effect) and the rule is not applied. A setting that raises (a dtype the
device has no kernel for) is a row saying why; the other rows are still measured.
"""
from __future__ import annotations

import json
from dataclasses import asdict

from device_args import device_of, parser_with_device

from vistar.engine.bench_e2e import core_items
from vistar.engine.bench_precision import TOLERANCE, choose, measure
from vistar.suites.loader import load_suite


def _angle(angle: str, e: dict) -> str:
    """`ANGLE max|d| tau (n[, lost k])`: images the setting left unscored put the row outside the tolerance."""
    delta = "-" if e["max_abs_delta"] is None else f"{e['max_abs_delta']:.4}"
    tau = "-" if e["kendall_tau"] is None else f"{e['kendall_tau']:.4}"
    lost = f", lost {e['lost']}" if e["lost"] else ""
    return f"{angle} {delta} {tau} ({e['n']}{lost})"


def main() -> None:
    parser = parser_with_device(__doc__, n=24)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--precisions", default="fp32,tf32,bf16,fp16")
    parser.add_argument("--model-scale", choices=("full", "tiny"), default="full")
    parser.add_argument("--json", help="write the rows and the choice here")
    args = parser.parse_args()
    device = device_of(parser, args)
    rows = measure(core_items(load_suite("core").prompts, args.n, args.size), device=device, precisions=args.precisions.split(","), batch=args.batch,
                   model_scale=args.model_scale)
    fp32 = {r.stage: r.images_per_s for r in rows if r.precision == "fp32"}
    print(f"{args.n} images {args.size}², device {device}, batch {args.batch}, model scale {args.model_scale}; "
          f"tolerance: |dscore| <= {TOLERANCE['max_abs_delta']}, Kendall tau >= {TOLERANCE['min_kendall_tau']} per angle")
    print(f"{'stage':14s} {'precision':9s} {'img/s':>8s} {'model':>8s} {'vs fp32':>7s}  per angle: max|d| tau (n)")
    for r in rows:
        speed = f"{r.images_per_s / fp32[r.stage]:.2f}x" if r.images_per_s and fp32.get(r.stage) else "-"
        angles = "  ".join(_angle(a, e) for a, e in r.effect.items() if e["n"] or e["lost"])
        print(f"{r.stage:14s} {r.precision:9s} {r.images_per_s or 0:8.2f} {r.model_images_per_s or 0:8.2f} {speed:>7s}  "
              f"{angles}{'' if r.inside() else '  OUTSIDE tolerance'}{f'  not measured: {r.error}' if r.error else ''}")
    chosen = choose(rows) if device.startswith("cuda") else None
    print(f"CUDA_DEFAULTS = {chosen}" if chosen is not None else "CUDA_DEFAULTS: not chosen on a CPU run")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": device, "tolerance": TOLERANCE, "rows": [asdict(r) for r in rows], "cuda_defaults": chosen},
                      fh, indent=2)


if __name__ == "__main__":
    main()
