"""`vistar bench`: latency and throughput of every feature stage and metric, and the engine against a naive loop.

What is measured (see docs/bench.md):
- per stage: latency p50/p95 at batch 1 (after warm-up, CUDA synchronised), throughput at each batch size and
  the best one; for torch stages at the best batch, the model's forward calls replayed alone (its own images/s at
  the same device, precision, batch and inputs) and the host milliseconds per image outside them; FLOPs per image
  (torch stages, counted by torch's FlopCounterMode) and the achieved fraction of
  the device's peak where the peak is known, process peak RSS and peak GPU memory;
- per metric: latency of the pure metric function on precomputed features;
- naive baseline: every image scored alone, each metric decoding it from disk and recomputing its own features
  (how per-metric scripts score); the engine: a real `vistar score` run (`run_score`) over the same files, end to
  end (decoding, hashing, planning, batched shared features, Parquet writes) on the warm models. The ratio is
  the speed-up.
"""
from __future__ import annotations

import platform
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..api import FeatureStage, Metric, ModelScale, RunOptions, StageContext, StageInput
from ..models.errors import MissingWeightError, as_missing_dependency
from ..models.provenance import loaded_models
from ..ontology import Ontology
from ..prompts_dsl import resolved_controls
from ..runtime import precision
from . import registry
from .batch import Features, failed_dependency
from .bench_forward import input_shapes, recording, replay_seconds
from .bench_inputs import Item, Workload, write_workload
from .images import load_rgb
from .params import metric_params
from .plan import metric_names
from .runmeta import hardware, versions
from .runner import ScoreConfig, run_score
from .store import read_scores

# Dense bf16 tensor-core peak (FLOP/s) by device-name substring; a device not listed reports no fraction.
PEAK_BF16 = {"H100": 989.4e12, "H200": 989.4e12, "A100": 312e12, "L40S": 362e12, "A10G": 70e12}


@dataclass
class StageReport:
    name: str
    status: str = "ok"
    note: str = ""
    p50_ms: float | None = None
    p95_ms: float | None = None
    first_call_ms: float | None = None   # the warm-up call: model loading, JIT compilation, caches
    throughput: dict[int, float] = field(default_factory=dict)   # batch size -> images/s
    best_batch: int | None = None
    images_per_s: float | None = None          # at the best batch
    # torch stages (`model_modules`), at the best batch: the model's forward calls replayed alone, and the rest
    model_images_per_s: float | None = None
    model_ratio: float | None = None           # images_per_s / model_images_per_s
    host_ms_per_image: float | None = None     # stage wall time outside the model's forward calls
    host_cpu_ms_per_image: float | None = None   # the process's CPU time there (all threads; a shared CPU's honest figure)
    precision: str | None = None
    model_inputs: list[str] = field(default_factory=list)   # "Module NxCxHxW": what the replayed calls took
    flops_per_image: float | None = None
    peak_fraction: float | None = None
    peak_rss_mib: float | None = None
    peak_gpu_mib: float | None = None
    random_init: list[str] = field(default_factory=list)   # this stage's models that ran on random weights


def _sync(device: str) -> None:
    """Wait for DEVICE's queued kernels (the run's card, `cuda:N` too: the current device may be another one)."""
    if device.startswith("cuda") and "torch" in sys.modules:
        sys.modules["torch"].cuda.synchronize(device)


def _inputs(items: list[Item], feats: list[Features], stage: FeatureStage, ontology: Ontology) -> list[StageInput]:
    return [StageInput(it.image, it.prompt, resolved_controls(it.prompt, ontology), {d: f[d] for d in stage.requires})
            for it, f in zip(items, feats)]


def _wanted(item: Item) -> set[str]:
    """Stages this image's own metrics need (a workload can mix angles, as a run can)."""
    return set(registry.stage_order({f for m in registry.metrics_for_prompt(item.prompt) for f in registry.metric(m).all_features}))


def _timed(fn: Callable[[], object], device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - start


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _gpu_reset(device: str) -> None:
    if device.startswith("cuda") and "torch" in sys.modules:
        sys.modules["torch"].cuda.reset_peak_memory_stats(device)   # the run's own card (cuda:N), not the current one


def _gpu_peak(device: str) -> float | None:
    if device.startswith("cuda") and "torch" in sys.modules:
        return float(sys.modules["torch"].cuda.max_memory_allocated(device)) / 2**20
    return None


def _flops(fn: Callable[[], object]) -> float | None:
    """FLOPs of one call, when the stage runs torch ops (None for onnxruntime/numpy stages)."""
    if "torch" not in sys.modules:
        return None
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    try:
        with counter:
            fn()
    except RuntimeError:   # the counter's decompositions fail on some ops under autocast (SAM's, bf16): not counted
        return None
    total = counter.get_total_flops()
    return float(total) if total else None


def _peak(device: str) -> float | None:
    name = hardware().get("gpu", "") if device.startswith("cuda") else ""
    return next((v for k, v in PEAK_BF16.items() if k in name), None)


def bench_stage(name: str, items: list[Item], feats: list[Features], ctx: StageContext, ontology: Ontology, batch_sizes: list[int],
                repeats: int) -> StageReport:
    stage = registry.feature_stage(name)
    rep = StageReport(name)
    inputs = _inputs(items, feats, stage, ontology)
    outputs: list[Any] = []
    try:   # warm-up on one image (loads the model, compiles, fills caches), then the shared outputs of all
        rep.first_call_ms = 1000 * _timed(lambda: outputs.extend(stage.compute(inputs[:1], ctx)), ctx.device)
        outputs.extend(stage.compute(inputs[1:], ctx) if len(inputs) > 1 else [])
    except MissingWeightError as exc:
        rep.status, rep.note = "skipped", str(exc)
        return rep
    except ModuleNotFoundError as exc:   # an optional package not installed: skipped like `vistar score` does
        missing = as_missing_dependency(exc)
        if missing is None:
            raise
        rep.status, rep.note = "skipped", str(missing)
        return rep
    for f, out in zip(feats, outputs):
        f[name] = out
    failed = [out for out in outputs if isinstance(out, BaseException)]
    if failed and len(failed) == len(outputs):   # a stage that returns its failure per image (a missing weight)
        weight = next((out for out in failed if isinstance(out, MissingWeightError)), None)
        rep.status, rep.note = ("skipped", str(weight)) if weight else ("error", f"{type(failed[0]).__name__}: {failed[0]}")
        return rep
    _gpu_reset(ctx.device)
    lat = [_timed(partial(stage.compute, inputs[i:i + 1], ctx), ctx.device)
           for _ in range(repeats) for i in range(len(inputs))]
    rep.p50_ms = 1000 * statistics.median(lat)
    rep.p95_ms = 1000 * float(np.percentile(lat, 95))
    for bs in batch_sizes:
        chunks = [inputs[i:i + bs] for i in range(0, len(inputs), bs)]
        for warm in {len(c): c for c in chunks}.values():   # untimed: a new batch shape allocates, plans, tunes once
            stage.compute(warm, ctx)
        secs = min(_timed(lambda: [stage.compute(c, ctx) for c in chunks], ctx.device) for _ in range(max(1, repeats // 2)))
        rep.throughput[bs] = len(inputs) / secs
    rep.best_batch = max(rep.throughput, key=lambda bs: rep.throughput[bs])
    rep.images_per_s = rep.throughput[rep.best_batch]
    if stage.model_modules is not None:
        _model_share(rep, stage, inputs, ctx, repeats)
    rep.flops_per_image = _flops(lambda: stage.compute(inputs[:1], ctx))
    peak = _peak(ctx.device)
    if rep.flops_per_image and peak:
        rep.peak_fraction = rep.flops_per_image * rep.throughput[rep.best_batch] / peak
    rep.peak_rss_mib, rep.peak_gpu_mib = _rss_mib(), _gpu_peak(ctx.device)
    return rep


def _model_share(rep: StageReport, stage: FeatureStage, inputs: list[StageInput], ctx: StageContext, repeats: int) -> None:
    """The stage at its best batch once more with its model's forward calls recorded: host ms per image is the wall
    time outside them; the calls replayed alone give the model's images/s for the very same work."""
    assert stage.model_modules is not None
    modules = stage.model_modules(ctx)
    rep.precision = precision.stage_precision(ctx, stage)
    if not modules:
        return
    bs = rep.best_batch or 1
    chunks = [inputs[i:i + bs] for i in range(0, len(inputs), bs)]
    value = precision.setting(ctx, stage)
    with recording(modules, partial(_sync, ctx.device)) as record:
        cpu = time.process_time()
        wall = _timed(lambda: [stage.compute(c, ctx) for c in chunks], ctx.device)
        cpu = time.process_time() - cpu
    model_s = replay_seconds(record, lambda: precision.compute(ctx, stage.name, value), partial(_sync, ctx.device),
                             max(2, repeats))   # its best
    rep.host_ms_per_image = 1000 * max(wall - record.model_s, 0.0) / len(inputs)
    rep.host_cpu_ms_per_image = 1000 * max(cpu - record.model_cpu_s, 0.0) / len(inputs)
    rep.model_images_per_s = len(inputs) / model_s if model_s > 0 else None
    rep.model_ratio = rep.images_per_s / rep.model_images_per_s if rep.images_per_s and rep.model_images_per_s else None
    rep.model_inputs = input_shapes(record)


def bench_metric(metric: Metric, items: list[Item], feats: list[Features], ontology: Ontology, repeats: int) -> dict[str, Any]:
    mine = [(it, f) for it, f in zip(items, feats) if metric.name in registry.metrics_for_prompt(it.prompt)]
    missing = [n for n in metric.features if any(isinstance(f.get(n), BaseException) or n not in f for _, f in mine)]
    if not mine or missing:
        return {"metric": metric.name, "status": "skipped",
                "note": "no prompt for this angle" if not mine else f"features unavailable: {', '.join(missing)}"}
    params = metric_params(ontology, metric)
    calls = [(lambda it=it, f=f: metric.fn(metric.inputs(f), resolved_controls(it.prompt, ontology), params, it.prompt))
             for it, f in mine]
    first = [_timed(c, "cpu") for c in calls]   # warm-up: a JIT kernel compiles (or loads its cache) on its first call
    lat = [_timed(c, "cpu") for _ in range(repeats) for c in calls]
    return {"metric": metric.name, "status": "ok", "p50_ms": 1000 * statistics.median(lat),
            "p95_ms": 1000 * float(np.percentile(lat, 95)), "first_call_ms": 1000 * first[0],
            "timed_after_warmup": True}


def naive_seconds(items: list[Item], paths: list[Path], ctx: StageContext, ontology: Ontology) -> list[float]:
    """Seconds per image when each image is scored alone, each metric decoding it from disk and recomputing its own
    feature chain (no sharing, no batching): how independent per-metric scripts score. Models are already loaded."""
    per_image = []
    for it, path in zip(items, paths):
        total = 0.0
        for mname in registry.metrics_for_prompt(it.prompt):
            metric = registry.metric(mname)
            feats: Features = {}

            def run_chain() -> None:
                image = load_rgb(path)
                for sname in registry.stage_order(set(metric.all_features)):
                    stage = registry.feature_stage(sname)
                    failed = failed_dependency(stage, feats)
                    if failed is not None:   # as the engine does: a failed or skipped dependency ends the chain
                        feats[sname] = failed
                        continue
                    inp = StageInput(image, it.prompt, resolved_controls(it.prompt, ontology),
                                              {d: feats[d] for d in stage.requires})
                    feats[sname] = stage.compute([inp], ctx)[0]
                if not any(isinstance(feats.get(n), BaseException) for n in metric.features):
                    metric.fn(metric.inputs(feats), resolved_controls(it.prompt, ontology),
                              metric_params(ontology, metric), it.prompt)
            total += _timed(run_chain, ctx.device)
        per_image.append(total)
    return per_image


def stage_calls(items: list[Item]) -> tuple[int, int]:
    """Feature computations (image, stage) of the naive loop and of the engine: what sharing saves on this workload."""
    naive = sum(len(registry.stage_order(set(registry.metric(m).all_features)))
                for it in items for m in registry.metrics_for_prompt(it.prompt))
    return naive, sum(len(_wanted(it)) for it in items)


def engine_end_to_end(work: Workload, out: Path, ctx: StageContext, ontology_file: Path | None,
                      batch: int) -> tuple[float, dict[str, int]]:
    """Seconds of a real `run_score` over the workload files into the fresh folder OUT, with `vistar score`'s
    defaults but BATCH and the bench's warm context (models loaded, options such as random_init as asked), and
    the status counts of the rows it wrote."""
    cfg = ScoreConfig(images=work.images, prompts=work.prompts, out=out, manifest=work.manifest, device=ctx.device,
                      batch_size=batch, ontology=ontology_file, model_paths=ctx.model_paths, command="vistar bench")
    seconds = _timed(lambda: run_score(cfg, warm=ctx), ctx.device)
    return seconds, {status: int(n) for status, n in read_scores(out)["status"].value_counts().items()}


def _rate(images: int, seconds: float) -> float | None:
    return images / seconds if images > 0 and seconds > 0 else None


def compare(items: list[Item], ctx: StageContext, ontology: Ontology, ontology_file: Path | None,
            batch: int) -> dict[str, Any]:
    """Naive loop vs the engine, both reading the same files on warm models (neither includes process start or
    model loading). Besides the totals, steady-state images/s: the naive loop without its first image, the engine
    as the marginal rate between a run over the first quarter of the images and a run over all of them, which
    removes the engine's fixed per-run cost (run folder, planning, hashing, Parquet generation, run.json)."""
    with tempfile.TemporaryDirectory(prefix="vistar-bench-") as tmp:
        work = write_workload(items, Path(tmp))
        naive = naive_seconds(items, work.paths, ctx, ontology)
        engine, rows = engine_end_to_end(work, Path(tmp) / "run", ctx, ontology_file, batch)
        head = max(1, len(items) // 4)
        head_s = None
        if len(items) > head:
            (Path(tmp) / "head").mkdir()
            head_work = write_workload(items[:head], Path(tmp) / "head")
            head_s, _ = engine_end_to_end(head_work, Path(tmp) / "head" / "run", ctx, ontology_file, batch)
    expected = sum(len(metric_names(it.prompt)) for it in items)
    if sum(rows.values()) != expected:   # a speed-up over different work would mean nothing
        raise RuntimeError(f"the timed run wrote {sum(rows.values())} rows, not one per (image, metric) = {expected}")
    naive_calls, engine_calls = stage_calls(items)
    return {"images": len(items), "naive_s": sum(naive), "engine_end_to_end_s": engine, "engine_batch": batch,
            "rows": rows, "speedup": sum(naive) / engine if engine > 0 else None,
            "naive_steady_ips": _rate(len(naive) - 1, sum(naive[1:])),
            "engine_steady_ips": None if head_s is None else _rate(len(items) - head, engine - head_s),
            "stage_calls": {"naive": naive_calls, "engine": engine_calls},
            "includes": {"naive": "decode + feature chain + metric per (image, metric), warm models",
                         "engine": "a full `vistar score` run: planning, hashing, decode, shared batched features, "
                                   "metrics, Parquet and run.json writes, warm models",
                         "neither": "process start, imports, model loading"}}


def run_bench(items: list[Item], *, device: str = "cpu", batch_sizes: Sequence[int] = (1, 2, 4, 8), repeats: int = 3,
              ontology_file: Path | None = None, model_paths: dict[str, str] | None = None,
              random_init: bool = False, model_scale: ModelScale = "full") -> dict[str, Any]:
    """MODEL_SCALE `tiny`: every catalogued model replaced by its small random-initialised variant (models.yaml)."""
    ontology = Ontology.load(ontology_file)
    ctx = StageContext(device=device, model_paths=model_paths or {}, features=ontology.data.get("features") or {},
                       options=RunOptions(random_init=random_init, model_scale=model_scale))
    metrics = sorted({m for it in items for m in registry.metrics_for_prompt(it.prompt)})
    needed = {f for m in metrics for f in registry.metric(m).all_features}
    feats: list[Features] = [dict() for _ in items]
    wanted = [_wanted(it) for it in items]
    stages = []
    for name in registry.stage_order(needed):
        idx = [i for i, w in enumerate(wanted) if name in w]
        mine = [feats[i] for i in idx]
        if any(isinstance(f.get(d), BaseException) for f in mine for d in registry.feature_stage(name).requires):
            stages.append(StageReport(name, "skipped", "a stage it requires was skipped"))
            for f in mine:   # so the stages that require this one are skipped too, rather than missing an input
                f[name] = RuntimeError(f"{name}: a stage it requires was skipped")
            continue
        try:
            rep = bench_stage(name, [items[i] for i in idx], mine, ctx, ontology, list(batch_sizes), repeats)
        except Exception as exc:  # noqa: BLE001 - e.g. an op this device has no kernel for: that stage's row, the others measured
            rep = StageReport(name, "error", f"{type(exc).__name__}: {exc}")
        if random_init or model_scale != "full":
            rep.random_init = [m for m in registry.feature_stage(name).models if loaded_models().get(m, {}).get("random_init")]
        if rep.status != "ok":
            for f in mine:
                f[name] = MissingWeightError(name, rep.note)
        stages.append(rep)
    metric_reports = [bench_metric(registry.metric(m), items, feats, ontology, repeats) for m in metrics]
    models = loaded_models()   # before the timed run, which starts its own record and reuses these models
    comparison = None
    if all(s.status == "ok" for s in stages):
        best = max((s.best_batch or 1 for s in stages), default=1)
        comparison = compare(items, ctx, ontology, ontology_file, best)
    return {"fingerprint": {"versions": versions(), "hardware": hardware(), "python": platform.python_version(),
                            "device": device, "random_init": random_init, "model_scale": model_scale,
                            "random_init_models": {s.name: s.random_init for s in stages if s.random_init},
                            "models": models},   # path and sha256 of each weight, or random_init
            "stages": [s.__dict__ for s in stages], "metrics": metric_reports, "naive_vs_engine": comparison}
