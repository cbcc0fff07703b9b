"""Capacity on paper: from `vistar bench --json` numbers, the CPU cores and GPUs that keep every stage of a
suite busy for N images, and the hours it takes (docs/scaling.md has a worked example).

    python benchmarks/plan_capacity.py cpu.json gpu.json --images 1000000 --suite full
    python benchmarks/plan_capacity.py cpu.json --assume depth=40@gpu --assume subject_masks=20@gpu --images 1000000

Each image needs the stages of its prompt's metrics (the suite's angle mix gives each stage's share of images).
A stage's cost per image is 1 / its best images/s in the bench JSON it comes from (later files win for a stage
measured twice): CPU stages cost core-seconds (vistar's stages run one thread each, so run the CPU bench with
OMP_NUM_THREADS=1), stages that ran on CUDA cost GPU-seconds. `--assume STAGE=IMG_PER_S@cpu|gpu` fills a stage
no JSON measured and is marked `assumed`. Metrics add their p50 per image on a core, and decoding
`--decode-ms` per image (measure yours with benchmarks/bench_pipeline.py). Judge stages (HWPQ, protocol judges)
call an API: they are counted, not costed.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

CPU_ON_ANY_DEVICE = {"faces", "pose", "panels", "thumbnail", "ocr", "shadows", "padim"}  # numpy/onnxruntime/MediaPipe
JUDGE_PREFIXES = ("judge.", "hwpq")


def suite_needs(prompts) -> tuple[int, Counter, Counter]:
    """(prompts, images needing each stage, images scored by each metric) for a list of prompts."""
    from vistar.engine import registry

    stages, metrics = Counter(), Counter()
    for prompt in prompts:
        names = registry.metrics_for_prompt(prompt)
        metrics.update(names)
        wanted = set()
        for name in names:
            wanted |= set(registry.metric(name).all_features)
        stages.update(registry.stage_order(wanted))
    return len(prompts), stages, metrics


def measured(paths: list[Path]) -> tuple[dict, dict]:
    """stage -> (images/s at the best batch, 'cpu'|'gpu', source); metric -> p50 ms."""
    stages, metrics = {}, {}
    for path in paths:
        report = json.loads(path.read_text())
        device = report["fingerprint"]["device"]
        for s in report["stages"]:
            if s["status"] == "ok" and s["throughput"]:
                where = "gpu" if device.startswith("cuda") and s["name"] not in CPU_ON_ANY_DEVICE else "cpu"
                stages[s["name"]] = (max(s["throughput"].values()), where, path.name)
        for m in report["metrics"]:
            if m.get("status") == "ok":
                metrics[m["metric"]] = m["p50_ms"]
    return stages, metrics


def plan(n_images: int, prompts, bench: list[Path], assume: list[str], decode_ms: float) -> dict:
    n_prompts, stage_images, metric_images = suite_needs(prompts)
    stages, metric_ms = measured(bench)
    for item in assume:
        name, rest = item.split("=", 1)
        rate, where = rest.split("@") if "@" in rest else (rest, "cpu")
        stages[name] = (float(rate), where, "assumed")
    rows, missing, judges = [], [], 0.0
    for name, count in sorted(stage_images.items(), key=lambda kv: -kv[1]):
        share = count / n_prompts
        if name.startswith(JUDGE_PREFIXES):
            judges += share * n_images
            continue
        if name not in stages:
            missing.append(name)
            continue
        rate, where, source = stages[name]
        rows.append({"stage": name, "where": where, "share": share, "images_per_s": rate, "source": source,
                     "hours": share * n_images / rate / 3600})
    metric_h = sum(metric_ms.get(m, 0.0) / 1000 * c / n_prompts for m, c in metric_images.items()) * n_images / 3600
    rows.append({"stage": "metrics", "where": "cpu", "share": 1.0, "images_per_s": None, "source": "p50 of bench",
                 "hours": metric_h})
    rows.append({"stage": "decode", "where": "cpu", "share": 1.0, "images_per_s": 1000 / decode_ms if decode_ms else None,
                 "source": "--decode-ms", "hours": n_images * decode_ms / 1000 / 3600})
    return {"rows": rows, "missing": missing, "judge_images": judges,
            "cpu_h": sum(r["hours"] for r in rows if r["where"] == "cpu"),
            "gpu_h": sum(r["hours"] for r in rows if r["where"] == "gpu")}


def print_plan(result: dict, n_images: int, gpus: list[int], cores: list[int]) -> None:
    print(f"{n_images:,} images\n")
    print(f"{'stage':<16}{'on':>4}{'share':>7}{'img/s/worker':>14}{'worker-h':>10}  source")
    for r in result["rows"]:
        rate = f"{r['images_per_s']:.1f}" if r["images_per_s"] else "-"
        print(f"{r['stage']:<16}{r['where']:>4}{r['share']:>7.0%}{rate:>14}{r['hours']:>10.1f}  {r['source']}")
    cpu_h, gpu_h = result["cpu_h"], result["gpu_h"]
    print(f"\nCPU: {cpu_h:.1f} core-hours   GPU: {gpu_h:.1f} GPU-hours")
    if result["missing"]:
        print(f"not costed (no bench number; --assume them): {', '.join(result['missing'])}")
    if result["judge_images"]:
        print(f"judge/API calls: about {result['judge_images']:,.0f} images need a judge (bounded by the API's rate)")
    if gpu_h:
        print(f"\n{'GPUs':>5}{'cores to keep them busy':>25}{'hours':>8}")
        for g in gpus:
            print(f"{g:>5}{cpu_h / gpu_h * g:>25.0f}{gpu_h / g:>8.1f}")
    print(f"\n{'cores':>6}{'hours (CPU stages only)':>25}")
    for c in cores:
        print(f"{c:>6}{cpu_h / c:>25.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench", nargs="+", type=Path, help="`vistar bench --json` files (later ones win per stage)")
    ap.add_argument("--images", type=int, default=1_000_000)
    ap.add_argument("--suite", default="full", help="a shipped suite giving the angle mix")
    ap.add_argument("--prompts", type=Path, help="a prompt file giving the angle mix instead of --suite")
    ap.add_argument("--assume", action="append", default=[], metavar="STAGE=IMG_PER_S@cpu|gpu")
    ap.add_argument("--decode-ms", type=float, default=20.0, help="decoding cost per image on one core")
    ap.add_argument("--gpus", default="1,2,4,8")
    ap.add_argument("--cores", default="16,64,256")
    args = ap.parse_args()
    if args.prompts:
        from vistar.prompts_dsl import read_prompts

        prompts = read_prompts(args.prompts).prompts
    else:
        from vistar.suites import load_builtin

        prompts = load_builtin(args.suite)
    result = plan(args.images, prompts, args.bench, args.assume, args.decode_ms)
    print_plan(result, args.images, [int(g) for g in args.gpus.split(",")], [int(c) for c in args.cores.split(",")])


if __name__ == "__main__":
    main()
