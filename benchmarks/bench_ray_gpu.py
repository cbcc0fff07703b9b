"""The core suite's CV angles through Ray's GPU and CPU pools against the local executor, on one machine's GPU.

    python benchmarks/bench_ray_gpu.py [--n 48] [--size 1024] [--device cuda] [--cpu-workers N] [--batch 8]
                                       [--model-scale full|tiny] [--json FILE]
    python benchmarks/bench_ray_gpu.py --dry-run      # the same two runs on the CPU, tiny models, 8 images of 96²

The same N synthetic images (`bench_e2e.core_items`), random-initialised models where weights are missing, scored
twice in this process with `run_score`: `--executor local --cpu-workers N` (the pool; on a GPU each worker
holds its own copy of the models) and `--executor ray` (a Ray instance started for the run: CPU actors for OCR,
pose, faces and panels, two fractional-GPU actors per torch group). Prints images/s over each whole run and in
its steady state (between the first and the last batch), the GPU busy fraction in the steady state (NVML,
sampled every 0.1 s; '-' on a CPU) and the rows by status, which must be the same for both.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from device_args import device_of, parser_with_device

from vistar.api import RunOptions
from vistar.engine.bench_e2e import core_items, engine_run, steady_rate
from vistar.engine.bench_inputs import write_workload
from vistar.engine.executors.workers import usable_cores
from vistar.suites.loader import load_suite

DRY_RUN = {"device": "cpu", "model_scale": "tiny", "n": 8, "size": 96, "batch": 2}


def main() -> None:
    parser = parser_with_device(__doc__, n=48)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--cpu-workers", type=int, default=usable_cores())
    parser.add_argument("--model-scale", choices=("full", "tiny"), default="full")
    parser.add_argument("--dry-run", action="store_true", help="check the runs on the CPU: " +
                        ", ".join(f"{k} {v}" for k, v in DRY_RUN.items()))
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args()
    if args.dry_run:
        vars(args).update(DRY_RUN)
    device = device_of(parser, args)
    items = core_items(load_suite("core").prompts, args.n, args.size)
    options = RunOptions(random_init=True, model_scale=args.model_scale)
    report = {"images": len(items), "device": device, "batch": args.batch, "cpu_workers": args.cpu_workers, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="vistar-ray-gpu-") as tmp:
        work = write_workload(items, Path(tmp))
        for executor in ("local", "ray"):
            run = engine_run(work, Path(tmp) / executor, device, args.batch, args.cpu_workers, options, executor)
            report["runs"][executor] = {"seconds": run.seconds, "ips": len(items) / run.seconds, "rows": run.rows,
                                        "steady_ips": steady_rate(len(items), args.batch, run.batch_done),
                                        "gpu_busy": run.gpu_busy}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    fmt = lambda v, spec=".2f": "-" if v is None else format(v, spec)  # noqa: E731
    print(f"{len(items)} images {args.size}², device {device}, batch {args.batch}, --cpu-workers {args.cpu_workers}, "
          f"model scale {args.model_scale}\n")
    print("| executor | wall s | images/s | steady images/s | GPU busy (steady) | rows |\n|---|---:|---:|---:|---:|---|")
    for executor, r in report["runs"].items():
        rows = ", ".join(f"{k} {v}" for k, v in sorted(r["rows"].items()))
        print(f"| {executor} | {r['seconds']:.1f} | {r['ips']:.2f} | {fmt(r['steady_ips'])} | {fmt(r['gpu_busy'], '.0%')} | {rows} |")


if __name__ == "__main__":
    main()
