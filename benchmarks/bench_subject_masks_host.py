"""Where `subject_masks`' host time goes on the CPU: the stage's pieces timed one by one, and its host ms as
`vistar bench` measures it (wall time outside the recorded forward calls), for the CSE storyboards of the
stage-vs-model workload (docs/performance.md, "Stage against model").

    OMP_NUM_THREADS=1 python benchmarks/bench_subject_masks_host.py [--rounds 5] [--size 1024]

The pieces are inclusive (a piece's time contains the pieces it calls: `padded` holds `_resized` and `_stacked`).
"""
from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size", type=int, default=1024)
    args = ap.parse_args()
    ctx = StageContext(device="cpu", model_paths={}, features=Ontology.load(None).data.get("features") or {},
                       options=RunOptions(model_scale="tiny"))
    inputs = _inputs(args.size, ctx)
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
