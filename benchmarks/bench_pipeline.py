"""Decode prefetch: end-to-end images/s of `run_score` over real JPEGs with and without prefetch and workers.

    python benchmarks/bench_pipeline.py                       # 48 JPEGs of 1024², 5 ms of "GPU" per image
    python benchmarks/bench_pipeline.py --images 256 --compute-ms 2 --side 1024

The feature stage stands in for GPU compute: it sleeps `--compute-ms` per image, so the CPU is idle as it is
while a GPU works; set it to your stage's per-image time at its best batch (`vistar bench --device cuda`).
Decoding is the real thing (Pillow, JPEG quality 90, photo-like content: scikit-image's astronaut tiled and
resized). Prints a table (median of `--repeats` whole runs, each in a fresh run directory, so hashing, planning
and Parquet writes are included); "nothing overlapped" is what decoding plus compute alone would allow.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from PIL import Image

from vistar.api import FeatureStage, Metric, MetricResult
from vistar.engine import registry
from vistar.engine.prefetch import decode_image
from vistar.engine.runner import ScoreConfig, run_score

COMPUTE_S = 0.005


def _stage(batch, ctx):
    time.sleep(COMPUTE_S * len(batch))
    return [float(item.image[::64, ::64].mean()) for item in batch]


STAGE = FeatureStage(name="bench_compute", version="1", compute=_stage)
METRIC = Metric(name="TR", angle="TR", version="1", features=("bench_compute",),
                fn=lambda f, c, p, pr: MetricResult.ok(f["bench_compute"] / 255.0))


def _images(folder: Path, n: int, side: int) -> list[Path]:
    from skimage import data

    base = Image.fromarray(data.astronaut())
    (folder / "imgs" / "m").mkdir(parents=True)
    paths = []
    for i in range(n):
        im = base.rotate(i * 7, resample=Image.BILINEAR).resize((side, side), Image.BICUBIC)
        path = folder / "imgs" / "m" / f"p{i}.jpg"
        im.save(path, quality=90)
        paths.append(path)
    (folder / "p.vistar").write_text("".join(f'p{i}: [GD|TR] sign "{i}"\n' for i in range(n)))
    return paths


def main() -> None:
    global COMPUTE_S
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=48)
    ap.add_argument("--side", type=int, default=1024)
    ap.add_argument("--compute-ms", type=float, default=5.0)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    ap.add_argument("--repeats", type=int, default=3, help="runs per setting; the median is printed")
    args = ap.parse_args()
    COMPUTE_S = args.compute_ms / 1000
    registry.FEATURES.clear()
    registry.FEATURES["bench_compute"] = "__main__:STAGE"
    registry.METRICS.clear()
    registry.METRICS["TR"] = "__main__:METRIC"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = _images(root, args.images, args.side)
        print(f"{args.images} JPEGs {args.side}², compute {args.compute_ms:.1f} ms/image, batch {args.batch_size}\n")
        print("| workers | prefetch | images/s |\n|---:|---:|---:|")
        for workers in args.workers:
            for depth in (0, 2):
                times = []
                for r in range(args.repeats):  # a fresh run directory each time: everything is scored
                    out = root / f"run-{workers}-{depth}-{r}"
                    start = time.perf_counter()
                    run_score(ScoreConfig(root / "imgs", root / "p.vistar", out, batch_size=args.batch_size,
                                          workers=workers, prefetch=depth))
                    times.append(time.perf_counter() - start)
                secs = statistics.median(times)
                print(f"| {workers} | {depth} | {args.images / secs:.1f} |")
        decode_s = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            for p in paths:
                decode_image(p, 10**9)
            decode_s.append((time.perf_counter() - start) / len(paths))
        decode_s = statistics.median(decode_s)
        print(f"\ndecode alone (in-process, measured after the runs): {decode_s * 1e3:.1f} ms/image; "
              f"nothing overlapped: {1 / (decode_s + COMPUTE_S):.1f} images/s, "
              f"fully overlapped: {1 / max(decode_s, COMPUTE_S):.1f} images/s")


if __name__ == "__main__":
    main()
