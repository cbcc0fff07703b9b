"""`vistar.Scorer` against `vistar score`: seconds per image for TR on rendered posters, one process each.

    python benchmarks/bench_scorer.py                 # 32 posters of 512², batches of 8, best of 2
    python benchmarks/bench_scorer.py --posters 64 --size 1024 --repeat 3

Rows (every one a single process with the same CPU affinity, `--cpu-workers 1` for the CLI):

- `vistar score` (new process): the command a training loop would start after writing PNGs, wall over its images:
  interpreter start, imports, model loading, hashing, decoding, scoring, Parquet writes;
- `vistar score` engine, warm models: `run_score` in this process with a stage context whose models are already
  loaded (what `vistar bench` times), so model loading is not counted; files still decoded, hashed and written;
- `Scorer.score`, batches of 8: the same images held in memory as arrays (what a generator hands over), scored
  eight per call by a Scorer whose models were loaded by an earlier call; `first call` is that earlier call, the
  one that loads the models, per image of its batch.

Model loading is counted where it happens: in every `vistar score` process, and once per Scorer (its first call);
the script also prints how many models the Scorer's later calls recorded loading (the model layer's provenance
record), which is 0. Each row is the fastest of `--repeat` runs (load from other processes only slows a run).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PHRASES = ["GRAND OPENING", "HANDLE WITH CARE", "FRESH BREAD DAILY", "NO PARKING ANY TIME", "SUMMER SALE 50% OFF",
           "OPEN 24 HOURS", "MIND THE GAP", "LIVE MUSIC TONIGHT"]


class _Counting(dict):
    writes = 0

    def __setitem__(self, key, value):
        self.writes += 1
        super().__setitem__(key, value)


def posters(root: Path, n: int, size: int) -> tuple[Path, Path, list[str]]:
    from vistar.synth.text import render_text

    folder = root / "images" / "m"
    folder.mkdir(parents=True)
    lines = []
    for i in range(n):
        text = f"{PHRASES[i % len(PHRASES)]} {i}"
        render_text(text, size=size, font_size=size // 18 + 4 * (i % 4), seed=i).save(folder / f"t{i}.png")
        lines.append(f't{i}: [GD|TR] A poster that says "{text}"')
    (root / "prompts.vistar").write_text("\n".join(lines) + "\n")
    return root / "images", root / "prompts.vistar", lines


def cli_process(images: Path, prompts: Path, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from vistar.cli import main; main()", "score", str(images), "--prompts", str(prompts),
                    "--out", str(out), "--cpu-workers", "1"], check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - start


def cli_engine_warm(images: Path, prompts: Path, out: Path, ctx) -> float:
    from vistar.engine.runner import ScoreConfig, run_score

    start = time.perf_counter()
    run_score(ScoreConfig(images=images, prompts=prompts, out=out, cpu_workers=1), warm=ctx)
    return time.perf_counter() - start


def scorer_batches(scorer, arrays: list[np.ndarray], lines: list[str], batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(arrays), batch):
        scorer.score(arrays[i:i + batch], lines[i:i + batch])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posters", type=int, default=32)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    from vistar import Scorer
    from vistar.models import provenance

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images, prompts, lines = posters(root, args.posters, args.size)
        files = sorted((images / "m").glob("*.png"), key=lambda p: int(p.stem[1:]))
        arrays = [np.asarray(Image.open(f).convert("RGB")) for f in files]
        n = len(arrays)
        runs = iter(range(10_000))
        process = min(cli_process(images, prompts, root / f"run{next(runs)}") for _ in range(args.repeat))

        scorer = Scorer(angles=["TR"], batch_size=args.batch)
        start = time.perf_counter()
        scorer.score(arrays[:args.batch], lines[:args.batch])        # loads the models
        first = (time.perf_counter() - start) / min(args.batch, n)
        recorded = provenance.loaded_models()
        provenance._LOADED = counting = _Counting(provenance._LOADED)   # every model the later calls record loading
        steady, warm = float("inf"), float("inf")
        for _ in range(args.repeat):   # alternated, so both see the same machine
            steady = min(steady, scorer_batches(scorer, arrays, lines, args.batch))
            warm = min(warm, cli_engine_warm(images, prompts, root / f"run{next(runs)}", scorer.context))

    rows = [("`vistar score` (new process, models loaded)", process / n),
            ("`vistar score` engine, warm models", warm / n),
            (f"`Scorer.score`, batches of {args.batch} in memory, warm models", steady / n),
            (f"`Scorer.score`, first call (loads {len(recorded)} models)", first)]
    print(f"TR on {n} rendered posters of {args.size}², one process, {len(os.sched_getaffinity(0))} usable core(s), "
          f"best of {args.repeat}\n")
    print("| how | s per image |\n|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value:.3f} |")
    print(f"\nScorer / `vistar score` process: {steady / process:.2f}; Scorer / warm engine: {steady / warm:.2f}; "
          f"models the Scorer's later calls loaded: {counting.writes}")


if __name__ == "__main__":
    main()
