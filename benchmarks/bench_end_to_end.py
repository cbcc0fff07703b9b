"""The core suite's CV angles end to end on one device: the engine with `--cpu-workers` against a naive loop.

    python benchmarks/bench_end_to_end.py [--n 96] [--size 1024] [--device auto] [--cpu-workers N] [--batch 8]
                                          [--model-scale full|tiny] [--executor local|ray] [--json FILE]

N synthetic SIZE² images for the core suite's TR, LI, CSE, CPA, PSC and GC prompts (round-robin over the angles),
random-initialised models where weights are missing (`--model-scale tiny`: small ones everywhere, for a CPU). The
engine is a whole `vistar score` over the files (pool start-up and model loading included end to end; its steady
rate excludes them); the naive loop scores each image alone, per stage, batch 1, fp32, with the host processors,
on the same models (vistar/engine/bench_e2e.py says exactly what each side includes). Prints images/s of both,
the GPU busy fraction in the engine's steady state (NVML, sampled every 0.1 s) and the speed-up.
"""
from __future__ import annotations

import json

from device_args import device_of, parser_with_device

from vistar.engine.bench_e2e import core_items, run_e2e
from vistar.engine.executors.workers import usable_cores
from vistar.suites.loader import load_suite


def main() -> None:
    parser = parser_with_device(__doc__, n=96)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--cpu-workers", type=int, default=usable_cores())
    parser.add_argument("--model-scale", choices=("full", "tiny"), default="full")
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args()
    device = device_of(parser, args)
    report = run_e2e(core_items(load_suite("core").prompts, args.n, args.size), device=device, batch=args.batch, cpu_workers=args.cpu_workers,
                     model_scale=args.model_scale, executor=args.executor)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    fmt = lambda v, spec=".2f": "-" if v is None else format(v, spec)  # noqa: E731
    print(f"{report['images']} images {args.size}² ({', '.join(report['angles'])}), device {device}, batch {args.batch}, "
          f"{args.executor} executor, --cpu-workers {args.cpu_workers}, model scale {args.model_scale}")
    print(f"  engine: {report['engine_s']:.1f} s end to end ({report['engine_ips']:.2f} img/s, start-up and model loading "
          f"included), steady {fmt(report['engine_steady_ips'])} img/s, GPU busy {fmt(report['gpu_busy'], '.0%')} "
          f"(steady; '-': not sampled), rows {report['rows']}")
    print(f"  naive:  {report['naive_s']:.1f} s, {fmt(report['naive_ips'])} img/s (each image alone, per stage, batch 1, "
          "fp32, host processors, warm models)")
    print(f"  speed-up: {fmt(report['speedup_steady'])}x steady, {report['speedup_end_to_end']:.2f}x end to end")


if __name__ == "__main__":
    main()
