"""The unit of work every executor ships to another process: a batch of jobs in, its rows out.

A `Job` holds its `Metric` object, whose function may be a closure that cannot be pickled, so a batch travels as
plain data (the metric by name) and the worker resolves the name through the same registry tables the driver
uses. A worker decodes the batch's images itself (the pixels never cross a process boundary), runs
`score_batch` exactly as the in-process loop does, and reports which models it loaded and where each stage ran,
so run.json says the same as a single-process run. Any failure that escapes `score_batch` becomes error rows for
that batch: a worker never fails the run.
"""
from __future__ import annotations

import os
import pickle
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...api import RunOptions, StageContext
from ...models.provenance import loaded_models, record_loaded
from ...ontology import Ontology
from ...prompts_dsl import Prompt
from ...runtime.device import prepare_process
from .. import registry
from ..batch import score_batch
from ..images import ImageRecord
from ..plan import Job, Row, row
from ..prefetch import decode_image
from .workers import ExecutorOptions

# the driver's settings that decide which weights and caches a worker reads (a Ray worker or a pool started
# earlier does not inherit the driver's environment as it is now)
FORWARDED_ENV = ("VISTAR_", "HF_", "NUMBA_CACHE_DIR")

# one thread per worker: N workers on N cores, not N x (cores) threads fighting for them (OpenCV sizes its own
# thread pool from OPENCV_FOR_THREADS_NUM when imported, every core by default)
PackedJob = tuple[ImageRecord, str, Prompt, str, Any, str]   # a Job with its metric by name (`pack`)


SINGLE_THREAD_ENV = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                             "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENCV_FOR_THREADS_NUM")}


@dataclass
class WorkerSetup:
    """Everything a worker needs to score like the driver: its registry tables (tests and plugins replace them),
    its import path, the stage context's settings and the run's ontology."""

    features: dict[str, str]
    metrics: dict[str, str]
    sys_path: list[str]
    device: str
    model_paths: dict[str, str]
    stage_params: dict[str, Any]
    options: RunOptions
    ledger_type: type | None   # the driver's judge ledger's class (`vlm.prices.Ledger`): each batch gets a fresh one
    ontology: Ontology
    max_pixels: int
    env: dict[str, str]

    @classmethod
    def of_run(cls, cfg: ExecutorOptions, ctx: StageContext, ontology: Ontology) -> WorkerSetup:
        key_env = ctx.options.judge.key_env if ctx.options.judge is not None else None
        names = FORWARDED_ENV + ((key_env,) if key_env else ())
        env = {k: v for k, v in os.environ.items() if k.startswith(names)}
        ledger_type = type(ctx.judge_ledger) if ctx.judge_ledger is not None else None  # its class: no engine -> vlm import
        return cls(dict(registry.FEATURES), dict(registry.METRICS), list(sys.path), ctx.device, dict(ctx.model_paths),
                   dict(ctx.features), ctx.options, ledger_type, ontology, cfg.max_pixels, env)


@dataclass
class BatchReport:
    """What a worker sends back for one batch."""

    rows: list[Row]
    models: dict[str, dict[str, Any]] = field(default_factory=dict)   # loaded_models() of the worker so far
    stage_devices: dict[str, str] = field(default_factory=dict)       # where stages said they ran
    stage_seconds: dict[str, float] = field(default_factory=dict)     # time per stage (and "decode", "metrics") in this batch
    ledger: dict[str, Any] = field(default_factory=dict)              # the judge calls of this batch (Ledger fields)


def pack(batch: list[list[Job]]) -> bytes:
    return pickle.dumps([[(j.record, j.sha256, j.prompt, j.metric.name, j.params, j.key) for j in group]
                         for group in batch], protocol=pickle.HIGHEST_PROTOCOL)


def image_paths(data: bytes) -> list[Path]:
    """The image file of each group of a packed batch (read without resolving the metrics)."""
    return [group[0][0].path for group in pickle.loads(data)]


def unpack(data: bytes) -> list[list[Job]]:
    return [[Job(rec, sha, prompt, registry.metric(name), params, key) for rec, sha, prompt, name, params, key in group]
            for group in pickle.loads(data)]


class BatchWorker:
    """One worker's state: the loaded models live in its stage context for all the batches it scores."""

    def __init__(self, setup: WorkerSetup, device: str | None = None):
        os.environ.update(setup.env)
        for path in setup.sys_path:  # a plugin module importable by the driver is importable here
            if path not in sys.path:
                sys.path.append(path)
        registry.FEATURES.clear()
        registry.FEATURES.update(setup.features)
        registry.METRICS.clear()
        registry.METRICS.update(setup.metrics)
        self.setup = setup
        self.ctx = StageContext(device=device or setup.device, model_paths=setup.model_paths,
                                features=setup.stage_params, options=setup.options)
        prepare_process(self.ctx.device)

    def score(self, packed: bytes) -> BatchReport:
        seconds: dict[str, float] = {}
        self.new_ledger()
        try:
            batch = unpack(packed)
        except Exception as exc:  # e.g. a metric module the worker cannot import
            return BatchReport(_failed_rows(pickle.loads(packed), f"worker cannot load the batch: {type(exc).__name__}: {exc}"))
        try:
            start = time.perf_counter()
            images = [decode_image(group[0].record.path, self.setup.max_pixels) for group in batch]
            seconds["decode"] = time.perf_counter() - start
            rows = score_batch(batch, images, self.ctx, self.setup.ontology, timings=seconds)
        except Exception as exc:  # score_batch turns stage failures into rows; this is anything else
            detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
            rows = _failed_rows(pickle.loads(packed), f"scoring worker failed: {detail}")
        return self.report(rows, seconds)

    def new_ledger(self) -> None:
        """A fresh judge ledger for the next batch (the driver sums the batches' ledgers)."""
        if self.setup.ledger_type is not None:
            self.ctx.judge_ledger = self.setup.ledger_type()

    def report(self, rows: list[Row], seconds: dict[str, float]) -> BatchReport:
        """What this worker did for the batch: its rows, models, stage devices, stage times and judge calls."""
        ledger = self.ctx.judge_ledger
        spent = {k: v for k, v in vars(ledger).items() if not k.startswith("_")} if ledger else {}
        return BatchReport(rows, loaded_models(), dict(self.ctx.stage_devices), seconds, spent)


def _failed_rows(groups: list[list[PackedJob]], message: str) -> list[Row]:
    """Error rows for a batch that never reached score_batch (from the packed form: no metric object needed)."""
    rows: list[Row] = []
    for group in groups:
        for rec, sha, prompt, name, _params, key in group:
            version = _metric_version(name)
            rows.append(row(rec, sha, prompt, name, version, None, "error", message, {}, key))
    return rows


def _metric_version(name: str) -> str:
    try:
        return registry.metric(name).version
    except Exception:
        return "?"


def absorb(report: BatchReport, ctx: StageContext, stage_seconds: dict[str, float]) -> None:
    """Fold a worker's report into the driver: its loaded models into run.json's record, where its stages ran into
    the driver's context (read by `stage_devices`), and its stage times into the run's totals."""
    for name, entry in report.models.items():
        extra = {k: v for k, v in entry.items() if k not in ("path", "sha256")}
        if entry.get("sha256"):
            record_loaded(name, entry["path"], entry["sha256"], **extra)
    ctx.stage_devices.update(report.stage_devices)
    for name, secs in report.stage_seconds.items():
        stage_seconds[name] = stage_seconds.get(name, 0.0) + secs
    ledger = ctx.judge_ledger
    if ledger is not None and report.ledger:
        with ledger._lock:
            for name, value in report.ledger.items():
                mine = getattr(ledger, name)
                merged = mine | value if isinstance(mine, set) else (mine and value) if isinstance(mine, bool) else mine + value
                setattr(ledger, name, merged)


def single_thread_env() -> None:
    """Called in a fresh worker before numpy, onnxruntime or torch load (they read these once, at import)."""
    for name, value in SINGLE_THREAD_ENV.items():
        os.environ[name] = value
