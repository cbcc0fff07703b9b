"""Kernels of vistar/kernels (depth geometry, LBP) and the numba candidates not kept
(benchmarks/kernel_candidates.py): reference vs numba (CPU) vs Triton (CUDA). Prints numbers; asserts nothing
about speed (every accelerated result is checked against its reference before it is timed).

    python benchmarks/bench_kernels.py [--repeats 7] [--side 256] [--batch 8] [--pairs 20000]

Each cell is the median time in ms of REPEATS calls after one warm-up call (numba and Triton compilation
excluded): single-thread process CPU time for CPU code, CUDA-synchronised wall time for Triton.
Inputs are synthetic at GC's work resolution (SIDE², the thumbnail side), a
batch of BATCH images; connected components run on Canny edges of scikit-image's astronaut photo.
Triton cells need a CUDA GPU; without one they read "no GPU".
"""
from __future__ import annotations

import argparse
import statistics
import time

import cv2
import kernel_candidates as candidates
import numpy as np

from vistar.kernels import depth_geometry, lbp


def timed(fn, repeats: int, sync=None) -> float:
    """Median ms of REPEATS calls after a warm-up: process CPU time for CPU code (steady on a shared
    machine; every CPU path here is single-threaded), wall time after synchronising for CUDA (SYNC given)."""
    clock = time.perf_counter if sync else time.process_time
    fn()
    if sync:
        sync()
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        if sync:
            sync()
        times.append(clock() - start)
    return 1e3 * statistics.median(times)


def cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def row(name: str, shape: str, cells: dict) -> None:
    fmt = lambda v: f"{v:10.3f}" if isinstance(v, float) else f"{v:>10s}"  # noqa: E731
    print(f"{name:24s} {shape:24s} " + " ".join(fmt(cells.get(k, "-")) for k in ("ref", "numba", "triton", "other")))


def bench_masked_sums(args) -> None:
    """Masked sums (a candidate: no metric needs them yet): numpy's einsum vs the numba loop."""
    rng = np.random.default_rng(0)
    for n_k, n_c in ((8, 1), (32, 3)):
        values = rng.normal(size=(args.batch, n_c, args.side, args.side))
        masks = rng.random((args.batch, n_k, args.side, args.side)) < 0.3
        ref = lambda: np.einsum("bkhw,bchw->bkc", masks.astype(np.float64), values)  # noqa: E731
        np.testing.assert_allclose(candidates.masked_sums(values, masks), ref(), rtol=1e-9)
        cells = {"ref": timed(ref, args.repeats), "numba": timed(lambda: candidates.masked_sums(values, masks), args.repeats)}
        row("masked sums", f"B{args.batch} K{n_k} C{n_c} {args.side}²", cells)


def bench_depth(args) -> None:
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:args.side, 0:args.side] / args.side
    depths = np.stack([0.5 + 0.3 * x - 0.2 * y + 0.05 * np.sin(12 * x + b) * np.cos(9 * y)
                       + 0.01 * rng.standard_normal(x.shape) for b in range(args.batch)])
    cues = lambda d: (depth_geometry.normal_dispersion_ref(d, 5), depth_geometry.mean_abs_laplacian_ref(d))  # noqa: E731
    cells = {"ref": timed(lambda: [cues(d) for d in depths], args.repeats), "numba": "n/a"}
    row("normals + curvature", f"B{args.batch} {args.side}² window 5", cells)


def bench_lbp(args, torch) -> None:
    from skimage.feature import local_binary_pattern

    rng = np.random.default_rng(0)
    grays = rng.integers(0, 256, (args.batch, args.side, args.side)).astype(np.uint8)
    for g in grays[:2]:
        assert (lbp.lbp_codes_numba(g) == lbp.lbp_codes_ref(g)).all()
    per_image = lambda backend: lambda: [lbp.lbp_tile_histograms(g, 4, backend=backend) for g in grays]  # noqa: E731
    cells = {"ref": timed(per_image("numpy"), args.repeats), "numba": timed(per_image("numba"), args.repeats),
             "triton": "no GPU",
             "other": timed(lambda: [local_binary_pattern(g, 8, 1, "uniform") for g in grays], args.repeats)}
    if torch:
        t = torch.tensor(grays, device="cuda")
        assert (lbp.lbp_triton(t, 4)[0][0].cpu().numpy() == lbp.lbp_codes_ref(grays[0])).all()
        cells["triton"] = timed(lambda: lbp.lbp_triton(t, 4), args.repeats, torch.cuda.synchronize)
    row("LBP codes + 4×4 hists", f"B{args.batch} {args.side}²", cells)


def bench_components(args) -> None:
    from scipy import ndimage
    from skimage import data

    gray = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2GRAY)
    eight = ndimage.generate_binary_structure(2, 2)
    for side in (256, 512, 1024):
        edges = cv2.Canny(cv2.resize(gray, (side, side)), 50, 150, L2gradient=True)
        mask = edges > 0
        assert (candidates.label(mask)[0] == ndimage.label(mask, structure=eight)[0]).all()
        cells = {"ref": timed(lambda: ndimage.label(mask, structure=eight), args.repeats),
                 "numba": timed(lambda: candidates.label(mask), args.repeats), "triton": "n/a",
                 "other": timed(lambda: cv2.connectedComponentsWithStats(edges, connectivity=8), args.repeats)}
        row("components (8-conn)", f"Canny edges {side}²", cells)


def _jaccard(x: str, y: str) -> float:
    """The Jaccard index of word sets (TR's token similarity up to metric version 3)."""
    s, t = set(x.split()), set(y.split())
    return len(s & t) / max(1, len(s | t))


def bench_levenshtein(args) -> None:
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), rng.integers(2, 9))) for _ in range(500)]
    phrase = lambda: " ".join(rng.choice(words, rng.integers(1, 8)))  # noqa: E731
    a = [phrase() for _ in range(args.pairs)]
    b = [s if rng.random() < 0.3 else phrase() for s in a]
    out = np.empty(len(a))
    expected = np.array([Levenshtein.normalized_distance(x, y) for x, y in zip(a, b)])
    packed = candidates.pack(a), candidates.pack(b)
    np.testing.assert_allclose(candidates.levenshtein_normalized(*packed, out), expected, atol=1e-12)
    cells = {
        "rapidfuzz, Python loop": lambda: [Levenshtein.normalized_distance(x, y) for x, y in zip(a, b)],
        "rapidfuzz process.cpdist": lambda: process.cpdist(a, b, scorer=Levenshtein.normalized_distance, workers=1),
        "numba incl. packing": lambda: candidates.levenshtein_normalized(candidates.pack(a), candidates.pack(b), out),
        "numba kernel only": lambda: candidates.levenshtein_normalized(*packed, out),
        "token Jaccard, sets": lambda: [_jaccard(x, y) for x, y in zip(a, b)],
    }
    print(f"\n{args.pairs} pairs of 1–7 word phrases (ms per batch):")
    for name, fn in cells.items():
        print(f"  {name:26s} {timed(fn, args.repeats):10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--side", type=int, default=256)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=20000)
    args = parser.parse_args()
    torch = cuda()
    import numba

    print(f"numba {numba.__version__}; CUDA: {torch.cuda.get_device_name() if torch else 'no (Triton cells skipped)'}")
    print(f"{'kernel':24s} {'input':24s} {'ref':>10s} {'numba':>10s} {'triton':>10s} {'other':>10s}   (ms per call)")
    bench_masked_sums(args)
    bench_depth(args)
    bench_lbp(args, torch)
    bench_components(args)
    print("ref: numpy/scipy reference; other: skimage local_binary_pattern (LBP), cv2.connectedComponentsWithStats")
    bench_levenshtein(args)


if __name__ == "__main__":
    main()
