"""CSE cost: SAM and GroundingDINO once per storyboard image (what the `subject_masks` stage does) versus
once per panel (the naive reading of "detect and segment the subject in each panel"). Prints a table;
asserts nothing.

    python benchmarks/bench_cse.py                       # CPU, small random-init SAM / GroundingDINO
    python benchmarks/bench_cse.py --sam DIR --detector DIR --device cuda --dtype bfloat16

Both modes call the stage's own `_segment` / `_detect` with the same batch size; "per panel" hands them
each panel crop as its own image with one box, "per image" the whole storyboard with all panels' boxes.
Without `--sam`/`--detector` the models are random-init checkpoints built here: the same architectures
(SAM ViT encoder + prompt decoder, Swin-T-style GroundingDINO) scaled down so a CPU run takes a minute.
Their absolute speed means nothing; the ratio shows how much of the per-panel cost was repeated encoding.
Timings: median of `--repeats` runs after one warm-up; CPU time on CPU, wall time on CUDA.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def _median_s(fn, repeats: int, device: str) -> float:
    """Median seconds per call: process CPU time on CPU (a shared machine's load barely moves it), wall
    time after a synchronise on CUDA."""
    import torch

    cuda = device.startswith("cuda")
    clock = time.perf_counter if cuda else time.process_time
    fn()  # warm-up (allocator, kernel selection)
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        if cuda:
            torch.cuda.synchronize()
        times.append(clock() - start)
    return statistics.median(times)


def _load(path: Path, kind: str, device: str, dtype: str):
    from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor, SamModel, SamProcessor

    from vistar.features.hf_models import torch_dtype

    model_cls, proc_cls = (SamModel, SamProcessor) if kind == "sam" else (AutoModelForZeroShotObjectDetection, AutoProcessor)
    return (model_cls.from_pretrained(path, dtype=torch_dtype(dtype)).eval().to(device), proc_cls.from_pretrained(path))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sam", type=Path, help="a SamModel folder (default: a small random-init one)")
    ap.add_argument("--detector", type=Path, help="a GroundingDINO folder (default: a small random-init one)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--size", type=int, default=768, help="storyboard side in pixels")
    ap.add_argument("--images", type=int, default=2, help="storyboards per batch")
    ap.add_argument("--grids", default="2x2,2x3,3x3")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = ap.parse_args()

    import torch

    from vistar.api import StageContext
    from vistar.features.subject_masks import _detect, _segment
    from vistar.synth.storyboards import make_storyboard
    from vistar.synth.tiny_models import save_tiny_grounding_dino, save_tiny_sam

    torch.set_num_threads(args.threads)
    tmp = Path(tempfile.mkdtemp(prefix="bench-cse-"))
    sam_dir = args.sam or save_tiny_sam(tmp / "sam", image_size=1024, hidden_size=96, layers=4)
    det_dir = args.detector or save_tiny_grounding_dino(tmp / "gdino")
    sam = _load(sam_dir, "sam", args.device, args.dtype)
    det = _load(det_dir, "detector", args.device, args.dtype)
    ctx = StageContext(device=args.device)
    p = {"dtype": args.dtype, "batch_size": 8, "box_threshold": 0.35, "text_threshold": 0.25}

    print(f"device {args.device}, dtype {args.dtype}, {args.images} storyboards of {args.size}², "
          f"torch threads {args.threads}, median of {args.repeats}")
    print(f"{'grid':>5} {'stage':>14} {'per panel ms':>13} {'per image ms':>13} {'speed-up':>9}")
    for grid in args.grids.split(","):
        rows, cols = (int(v) for v in grid.split("x"))
        boards = [make_storyboard(rows, cols, args.size, args.size, seed=s, subject=True) for s in range(args.images)]
        images = [b.image for b in boards]
        crops = [b.image[y0:y1, x0:x1] for b in boards for x0, y0, x1, y1 in b.boxes]
        # a subject box in the middle half of each panel, in image and in crop coordinates
        image_boxes = [np.array([[x0 + (x1 - x0) / 4, y0 + (y1 - y0) / 4, x1 - (x1 - x0) / 4, y1 - (y1 - y0) / 4]
                                 for x0, y0, x1, y1 in b.boxes]) for b in boards]
        crop_boxes = [np.array([[(x1 - x0) / 4, (y1 - y0) / 4, 3 * (x1 - x0) / 4, 3 * (y1 - y0) / 4]])
                      for b in boards for x0, y0, x1, y1 in b.boxes]
        n = len(boards)
        timings = {
            "SAM": (_median_s(lambda: _segment(crops, crop_boxes, *sam, p, ctx), args.repeats, args.device),
                    _median_s(lambda: _segment(images, image_boxes, *sam, p, ctx), args.repeats, args.device)),
            "GroundingDINO": (_median_s(lambda: _detect(crops, ["red fox."] * len(crops), *det, p, ctx), args.repeats, args.device),
                              _median_s(lambda: _detect(images, ["red fox."] * n, *det, p, ctx), args.repeats, args.device)),
        }
        for stage, (per_panel, per_image) in timings.items():
            print(f"{grid:>5} {stage:>14} {1000 * per_panel / n:>13.1f} {1000 * per_image / n:>13.1f} "
                  f"{per_panel / per_image:>8.2f}x")


if __name__ == "__main__":
    main()
