"""One end-to-end number (benchmarks/bench_end_to_end.py): the core suite's CV angles scored by the engine on one
device with `--cpu-workers` processes, against the same images through a naive loop, in the same run.

- engine: a whole `vistar score` (`run_score`) over the images written as files: process pool start, model
  loading in each worker, decoding, hashing, planning, batched stages, metrics, Parquet writes. Its steady rate is
  taken between the first and the last batch's completion (the progress callback), which leaves out start-up and
  model loading; end to end it counts everything.
- GPU busy: NVML's utilisation (the share of each sample period in which a kernel ran), sampled every 0.1 s in a
  thread during the engine run and averaged over the same steady window.
- naive: in this process, each image alone: decoded from its file, every stage of its metrics' chain called with
  that one image (batch 1) in fp32, CLIP/DINOv2/GroundingDINO/SAM preprocessed by their processors on the host
  (`preprocess: host`), then the metric; the models are the engine's (same catalogue entries and seed), loaded and
  warmed on the first image, which is not timed.
"""
from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from ..api import ModelScale, RunOptions, StageContext
from ..ontology import Ontology
from ..prompts_dsl import Prompt
from . import registry
from .bench import naive_seconds
from .bench_inputs import Item, Workload, synthetic_image, write_workload
from .runner import ScoreConfig, run_score
from .store import read_scores

CV_ANGLES = ("TR", "LI", "CSE", "CPA", "PSC", "GC")
HOST_PREPROCESSED = ("clip_embed", "dino_embed", "subject_masks")   # the stages with a `preprocess` option


def core_items(prompts: Sequence[Prompt], n: int, size: int, angles: Sequence[str] = CV_ANGLES) -> list[Item]:
    """N synthetic SIZE² images for the PROMPTS of ANGLES (the core suite's: `load_suite("core").prompts`; the suites
    sit above the engine), taken round-robin over the angles (so a small N still covers every angle), each angle's
    prompts in the given order."""
    groups = [ps for ps in ([p for p in prompts if p.angle == a] for a in angles) if ps]
    order = [groups[k % len(groups)][k // len(groups) % len(groups[k % len(groups)])] for k in range(n)]
    return [Item(synthetic_image(p, size, seed=i), p) for i, p in enumerate(order)]


def naive_features(features: Mapping[str, Any], stages: list[str]) -> dict[str, Any]:
    """The ontology's stage parameters for the naive loop over STAGES: torch stages in fp32, processors on the host."""
    out = {name: dict(params or {}) for name, params in features.items()}
    for name in stages:
        if registry.feature_stage(name).model_modules is not None:
            out.setdefault(name, {})["precision"] = "fp32"
        if name in HOST_PREPROCESSED:
            out.setdefault(name, {})["preprocess"] = "host"
    return out


class BusySampler:
    """GPU busy fraction sampled every PERIOD seconds while the block runs: (time, fraction) pairs from NVML
    (`torch.cuda.utilization`, which needs nvidia-ml-py); no samples without a GPU or NVML."""

    def __init__(self, device: str, period: float = 0.1):
        self.device, self.period = device, period
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> float | None:
        import torch

        try:
            return float(torch.cuda.utilization(self.device)) / 100.0
        except Exception:  # noqa: BLE001 - no NVML here: the report says "not sampled"
            return None

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            value = self._read()
            if value is None:
                return
            self.samples.append((time.perf_counter(), value))

    def __enter__(self) -> BusySampler:
        if str(self.device).startswith("cuda"):
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def fraction(self, start: float, end: float) -> float | None:
        inside = [v for t, v in self.samples if start <= t <= end]
        return sum(inside) / len(inside) if inside else None


@dataclass
class EngineRun:
    seconds: float
    batch_done: list[float] = field(default_factory=list)   # perf_counter when each batch's rows were written
    rows: dict[str, int] = field(default_factory=dict)   # status -> rows
    gpu_busy: float | None = None


def engine_run(work: Workload, out: Path, device: str, batch: int, cpu_workers: int, options: RunOptions,
               executor: str) -> EngineRun:
    done: list[float] = []
    cfg = ScoreConfig(images=work.images, prompts=work.prompts, out=out, manifest=work.manifest, device=device,
                      batch_size=batch, cpu_workers=cpu_workers, executor=executor, options=options, benchmark=True,
                      command="benchmarks/bench_end_to_end.py")
    with BusySampler(device) as busy:
        start = time.perf_counter()
        run_score(cfg, progress=lambda n, total: done.append(time.perf_counter()) if n else None)
        seconds = time.perf_counter() - start
    run = EngineRun(seconds, done, {s: int(k) for s, k in read_scores(out)["status"].value_counts().items()})
    if len(done) >= 2:
        run.gpu_busy = busy.fraction(done[0], done[-1])
    return run


def steady_rate(images: int, batch: int, done: list[float]) -> float | None:
    """Images per second between the first and the last batch's completion (the batches after the first)."""
    if len(done) < 2 or done[-1] <= done[0]:
        return None
    return (images - min(batch, images)) / (done[-1] - done[0])


def run_e2e(items: list[Item], *, device: str, batch: int = 8, cpu_workers: int = 1, model_scale: ModelScale = "full",
            executor: str = "local") -> dict[str, Any]:
    ontology = Ontology.load(None)
    options = RunOptions(random_init=True, model_scale=model_scale)
    stages = registry.stage_order({f for it in items for m in registry.metrics_for_prompt(it.prompt)
                                   for f in registry.metric(m).all_features})
    naive_ctx = StageContext(device=device, options=options,
                             features=naive_features(ontology.data.get("features") or {}, stages))
    with tempfile.TemporaryDirectory(prefix="vistar-e2e-") as tmp:
        work = write_workload(items, Path(tmp))
        naive_seconds(items[:1], work.paths[:1], naive_ctx, ontology)   # loads and warms the naive loop's models
        naive = naive_seconds(items, work.paths, naive_ctx, ontology)
        engine = engine_run(work, Path(tmp) / "run", device, batch, cpu_workers, options, executor)
    engine_steady = steady_rate(len(items), batch, engine.batch_done)
    naive_ips = len(items) / sum(naive) if sum(naive) > 0 else None
    return {"images": len(items), "angles": sorted({it.prompt.angle for it in items}), "device": device,
            "batch": batch, "cpu_workers": cpu_workers, "executor": executor, "model_scale": model_scale,
            "engine_s": engine.seconds, "engine_ips": len(items) / engine.seconds,
            "engine_steady_ips": engine_steady, "gpu_busy": engine.gpu_busy, "rows": engine.rows,
            "naive_s": sum(naive), "naive_ips": naive_ips,
            "speedup_end_to_end": sum(naive) / engine.seconds,
            "speedup_steady": engine_steady / naive_ips if engine_steady and naive_ips else None}
