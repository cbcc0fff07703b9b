"""Where `subject_masks`' host time goes on the CPU: the stage's pieces timed one by one, and its host ms as
`vistar bench` measures it (wall time outside the recorded forward calls), for the CSE storyboards of the
stage-vs-model workload (docs/performance.md, "Stage against model").

    OMP_NUM_THREADS=1 python benchmarks/bench_subject_masks_host.py [--rounds 5] [--size 1024] [--baseline DIR]

The pieces are inclusive (a piece's time contains the pieces it calls: `padded` holds `_resized` and `_stacked`).
OpenCV runs on one thread, as in `vistar bench` (where ultralytics sets it on import). `--baseline DIR` (a checkout
of an earlier commit, e.g. `git worktree add /tmp/before HEAD~2`) times that tree's stage against this one's instead,
in this one process, round after round in alternating order at batch 1 and 4 (the bench's host pass runs at whichever
was faster): on a machine shared with other jobs the load moves between two processes far more than within one.
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import vistar.features.pixel_prep as prep
import vistar.features.subject_masks as sm
from vistar.api import RunOptions, StageContext
from vistar.engine import bench, registry
from vistar.engine.bench_forward import recording
from vistar.engine.bench_inputs import load_items
from vistar.ontology import Ontology

PIECES = {sm: ["padded", "_detect", "_boxes", "assign_to_panels", "_segment", "_panel_masks", "_panel_mask"],
          prep: ["_resized", "_stacked", "_normalise_into"]}


def _inputs(size: int, ctx: StageContext) -> list:
    """The stage's inputs for the workload's CSE storyboards, their `panels` computed first."""
    ontology = Ontology.load(None)
    items = [it for it in load_items(Path(__file__).with_name("torch_stages.vistar"), None, 12, size)
             if "subject_masks" in bench._wanted(it)]
    feats: list[dict] = [{} for _ in items]
    for name in registry.stage_order({"subject_masks"})[:-1]:
        stage = registry.feature_stage(name)
        for f, out in zip(feats, stage.compute(bench._inputs(items, feats, stage, ontology), ctx)):
            f[name] = out
    return bench._inputs(items, feats, registry.feature_stage("subject_masks"), ontology)


def _timing(module, name: str, spent: dict) -> None:
    fn = getattr(module, name)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start
    setattr(module, name, timed)


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _against(baseline: Path, inputs: list, ctx: StageContext, rounds: int) -> None:
    """Host ms per storyboard of BASELINE's stage (its subject_masks and pixel_prep) and this tree's, alternating."""
    prep_before = _module("vistar.features._pixel_prep_baseline", baseline / "vistar/features/pixel_prep.py")
    sm_before = _module("vistar.features._subject_masks_baseline", baseline / "vistar/features/subject_masks.py")
    sm_before.padded = prep_before.padded
    stages = {"baseline": sm_before.STAGE, "this tree": registry.feature_stage("subject_masks")}
    for stage in stages.values():
        stage.compute(inputs, ctx)   # loads the models (shared: the same cache keys), fills the caches
    modules = stages["this tree"].model_modules(ctx)
    host: dict[tuple, list] = defaultdict(list)
    for r in range(rounds):
        for bs in (1, 4):
            for name in sorted(stages, reverse=bool(r % 2)):
                with recording(modules, lambda: None) as record:
                    wall, cpu = time.perf_counter(), time.process_time()
                    for i in range(0, len(inputs), bs):
                        stages[name].compute(inputs[i:i + bs], ctx)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                host[name, bs].append((1000 * (wall - record.model_s) / len(inputs),
                                       1000 * (cpu - record.model_cpu_s) / len(inputs)))
    print(f"{len(inputs)} storyboards x {rounds} rounds, host ms per storyboard: median [range]")
    for (name, bs), runs in sorted(host.items()):
        wall_ms, cpu_ms = [w for w, _ in runs], [c for _, c in runs]
        print(f"{name:10s} batch {bs}  wall {statistics.median(wall_ms):6.2f} [{min(wall_ms):.1f}-{max(wall_ms):.1f}]"
              f"  CPU {statistics.median(cpu_ms):6.2f} [{min(cpu_ms):.1f}-{max(cpu_ms):.1f}]")


def main() -> None:
    import cv2

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--baseline", type=Path, help="an earlier checkout whose stage to time against this one's")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    ctx = StageContext(device="cpu", model_paths={}, features=Ontology.load(None).data.get("features") or {},
                       options=RunOptions(model_scale="tiny"))
    inputs = _inputs(args.size, ctx)
    if args.baseline:
        _against(args.baseline, inputs, ctx, args.rounds)
        return
    stage = registry.feature_stage("subject_masks")
    stage.compute(inputs, ctx)   # loads the models, fills the caches
    assert stage.model_modules is not None
    modules = stage.model_modules(ctx)
    calls = args.rounds * len(inputs)
    spent: dict[str, float] = defaultdict(float)
    for module, names in PIECES.items():
        for name in names:
            _timing(module, name, spent)
    wall = model = 0.0
    for _ in range(args.rounds):
        with recording(modules, lambda: None) as record:
            start = time.perf_counter()
            for i in range(len(inputs)):
                stage.compute(inputs[i:i + 1], ctx)
            wall += time.perf_counter() - start
            model += record.model_s
    print(f"{len(inputs)} storyboards x {args.rounds} rounds, ms per storyboard")
    print(f"{'host (outside the forward calls)':34s} {1000 * (wall - model) / calls:7.2f}")
    for name, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"{name:34s} {1000 * seconds / calls:7.2f}")


if __name__ == "__main__":
    main()
