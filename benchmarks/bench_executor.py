"""Executors: images/s of `vistar score` in one process, over `--cpu-workers N` processes, and on a local Ray
instance with N CPUs, for TR on rendered 1024² posters and for a mixed TR/LI/CPA/GC workload.

    python benchmarks/bench_executor.py                          # 120 posters, 48 mixed images, N = 2
    python benchmarks/bench_executor.py --posters 40 --mixed 24 --workers 2

TR uses the real RapidOCR models (shipped with rapidocr), CPA the real MediaPipe ones; LI and GC run their real
stages on tiny random-init YOLO-seg and DPT checkpoints (the repository's test builders), so their detector
cost is far below the real models': the mixed numbers measure the executors, not a real GC/LI deployment.
Each number is one whole `vistar score` in a fresh process into a fresh run folder (imports, planning, hashing,
model loading in every worker, starting the local Ray instance and Parquet writes included); `--executor ray`
starts a Ray instance with the machine's usable cores and runs `--workers` actors. Utilisation per stage = seconds the stage ran, summed over workers, over
(wall seconds × workers): the stage with the largest share bounds the run. A stage's seconds include its lazy
model loading (and library imports) in each worker; what is left to 100 % is process start, decoding in the
one-process loop's background thread, and idle time.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tiny checkpoint builders live in tests/

PHRASES = ["GRAND OPENING", "HANDLE WITH CARE", "FRESH BREAD DAILY", "NO PARKING ANY TIME", "SUMMER SALE 50% OFF",
           "OPEN 24 HOURS", "MIND THE GAP", "WELCOME TO THE JUNGLE", "LIVE MUSIC TONIGHT", "KEEP OFF THE GRASS"]


def posters(root: Path, n: int) -> Path:
    from vistar.synth.text import render_text

    (root / "images" / "m").mkdir(parents=True)
    lines = []
    for i in range(n):
        text = f"{PHRASES[i % len(PHRASES)]} {i}"
        render_text(text, size=1024, font_size=56 + 8 * (i % 4), background=(245 - 3 * (i % 7), 240, 230 + i % 9),
                    seed=i).save(root / "images" / "m" / f"t{i}.png")
        lines.append(f't{i}: [GD|TR] A poster that says "{text}"')
    (root / "prompts.vistar").write_text("\n".join(lines) + "\n")
    return root


def mixed(root: Path, n: int) -> tuple[Path, dict]:
    """n images, a quarter each of TR (512² posters), LI (240×320 lit scenes), CPA (512² photo), GC (96×128)."""
    from skimage import data

    from tests.test_models_loading import save_tiny_dpt, save_tiny_yolo_seg
    from vistar.synth.lighting import sample_scene
    from vistar.synth.scenes import scene_pair
    from vistar.synth.text import render_text

    weights = {"dpt-hybrid-midas": str(save_tiny_dpt(root / "w" / "dpt")),
               "yolov8l-seg": str(save_tiny_yolo_seg(root / "w" / "yolo"))}
    person = Image.fromarray(data.astronaut())
    folder = root / "images" / "m"
    folder.mkdir(parents=True)
    lines = []
    for i in range(n):
        kind = ("TR", "LI", "CPA", "GC")[i % 4]
        if kind == "TR":
            text = f"{PHRASES[i % len(PHRASES)]} {i}"
            image = render_text(text, size=512, font_size=32, seed=i)
            lines.append(f'x{i}: [GD|TR] A poster that says "{text}"')
        elif kind == "LI":
            image = Image.fromarray(sample_scene([-0.94, 0.34, 0.2 * (i % 3)], seed=i).image)
            lines.append(f"x{i}: [PH|LI] three wooden blocks on a floor, low light from the left")
        elif kind == "CPA":
            image = person.rotate(3 * (i % 5)).resize((512, 512))
            lines.append(f"x{i}: [MS|CPA] an astronaut {{count=1}}")
        else:
            image = Image.fromarray(scene_pair(i, 96, 128)[i % 2].image)
            lines.append(f"x{i}: [GA|GC] a stone archway over a path")
        image.save(folder / f"x{i}.png")
    (root / "prompts.vistar").write_text("\n".join(lines) + "\n")
    return root, weights


def run(root: Path, out: Path, weights: dict, *options: str) -> dict:
    """One `vistar score` in a fresh process, so imports, model loading (in every worker) and, for Ray, starting
    the Ray instance are paid as a user pays them; `load` is the machine's 1-minute load average before it."""
    paths = [arg for name, path in weights.items() for arg in ("--model-path", f"{name}={path}")]
    cmd = [str(Path(sys.executable).parent / "vistar"), "score", str(root / "images"), "--prompts",
           str(root / "prompts.vistar"), "--out", str(out), "--batch-size", "4", *paths, *options]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    meta = json.loads((out / "run.json").read_text())
    return {"wall": wall, "load": load, "rows": meta["counts"], **meta["executor"]}


def report(name: str, n: int, results: dict) -> None:
    base = results["one process"]["wall"]
    print(f"\n{name}: {n} images")
    print(f"{'executor':<24}{'workers':>8}{'wall s':>9}{'load':>6}{'images/s':>10}{'vs 1 proc':>10}  rows")
    for label, r in results.items():
        rows = ", ".join(f"{k} {v}" for k, v in sorted(r["rows"].items()) if k in ("ok", "error", "skipped"))
        print(f"{label:<24}{r['workers']:>8}{r['wall']:>9.1f}{r['load']:>6.1f}{n / r['wall']:>10.2f}"
              f"{base / r['wall']:>9.2f}x  {rows}")
    print("utilisation per stage (% of workers x wall):")
    for label, r in results.items():
        capacity = r["wall"] * max(1, r["workers"])
        shares = sorted(r["stage_seconds"].items(), key=lambda kv: -kv[1])
        print(f"  {label:<22}" + "  ".join(f"{k} {100 * v / capacity:.0f}%" for k, v in shares if v / capacity >= 0.005))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--posters", type=int, default=120, help="TR workload size (1024² posters; 0 skips it)")
    ap.add_argument("--mixed", type=int, default=48, help="mixed TR/LI/CPA/GC workload size (0 skips it)")
    ap.add_argument("--workers", type=int, default=2, help="processes of the pool, CPUs of the Ray instance")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray executor")
    args = ap.parse_args()
    os.environ.setdefault("VISTAR_HOME", tempfile.mkdtemp())  # only the weights named here
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    print(f"machine: {os.cpu_count()} CPUs visible, {len(os.sched_getaffinity(0))} usable; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        workloads = []
        if args.posters:
            workloads.append(("TR, 1024² posters", args.posters, posters(tmp / "tr", args.posters), {}))
        if args.mixed:
            root, weights = mixed(tmp / "mixed", args.mixed)
            workloads.append(("mixed TR/LI/CPA/GC", args.mixed, root, weights))
        for name, n, root, weights in workloads:
            workers = str(args.workers)
            results = {"one process": run(root, tmp / f"{n}-1", weights, "--cpu-workers", "1"),
                       f"--cpu-workers {workers}": run(root, tmp / f"{n}-pool", weights, "--cpu-workers", workers)}
            if not args.no_ray:
                results[f"ray, {workers} CPUs"] = run(root, tmp / f"{n}-ray", weights, "--executor", "ray",
                                                      "--cpu-workers", workers)
            report(name, n, results)
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
