"""The actors of the Ray pipeline (docs/scaling.md, "The Ray pipeline"): `Decoder` reads a planned batch's images,
`StageRunner` runs one group of feature stages over them, `Scorer` applies the metrics and makes the rows (a CPU
group's `StageRunner` decodes and scores too, next to its stages: see `ray_plan.py`).

A planned batch travels from actor to actor as one pickled `InFlight` (bytes in Ray's object store): features are arbitrary
Python objects (arrays, dataclasses, the exception a stage failed with) that no Arrow schema describes, and a
batch that stays whole runs every stage over the same images together, as `batch.score_batch` does. The steps
below are `score_batch`'s (its `run_stage` included), split where the actors change; the executor tests hold the
two to the same rows.
"""
from __future__ import annotations

import io
import pickle
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..batch import Decoded, Features, metric_rows, run_stage, stages_wanted
from ..prefetch import decode_image
from .work import BatchReport, BatchWorker, _failed_rows, image_paths, single_thread_env, unpack


@dataclass
class InFlight:
    """A planned batch between two actors: its packed jobs, decoded images (or the ImageError of each), the
    features computed so far (per image: stage name -> output or exception), and each actor's report."""

    packed: bytes
    images: list[Decoded | None] = field(default_factory=list)   # None: pixels no later actor reads
    features: list[Features] = field(default_factory=list)
    reports: list[BatchReport] = field(default_factory=list)
    failure: str | None = None   # an actor failed outside any stage: the batch ends as error rows


class _ExceptionsByValue(pickle.Pickler):
    """Pickles an exception that pickle's own way would not give back (it calls the class with the args, which
    for `MissingWeightError(name, hint)` builds another message) as its class, args and attributes, rebuilt
    without calling `__init__`."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, BaseException) and not _pickles_back(obj):
            return _rebuild_exception, (type(obj), obj.args, dict(vars(obj)))
        return NotImplemented


def _pickles_back(exc: BaseException) -> bool:
    try:
        reduced = exc.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
        if isinstance(reduced, str):   # a global's name: not how exceptions reduce
            return False
        rebuild, args = reduced[:2]
        again = rebuild(*args)
    except Exception:
        return False
    return type(again) is type(exc) and str(again) == str(exc)


def _rebuild_exception(cls: type[BaseException], args: tuple[Any, ...], attrs: dict[str, Any]) -> BaseException:
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(attrs)
    return exc


def dumps(state: InFlight) -> bytes:
    """The state as bytes; a feature that cannot be pickled becomes that image's failure of the stage."""
    try:
        return _dump(state)
    except Exception:  # find the culprits (rare: a stage returning a live handle) and replace only them
        for feats in state.features:
            for name, value in feats.items():
                try:
                    _dump(value)
                except Exception as exc:
                    feats[name] = RuntimeError(f"stage '{name}' output cannot be sent to the next Ray stage: "
                                               f"{type(exc).__name__}: {exc}")
        return _dump(state)


def _dump(obj: object) -> bytes:
    buf = io.BytesIO()
    _ExceptionsByValue(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


class _Actor:
    """One process, one thread, for the actor's life: `run(setup, state)` takes a pickled `InFlight` and gives the
    next one (or the last actor's reports). SETUP is a one-item list holding the run's pickled `WorkerSetup` or Ray's
    reference to it, fetched on the first call only. A step that raises marks the batch failed instead of failing
    the run."""

    needs_setup = True

    def __init__(self) -> None:
        single_thread_env()
        self.worker: BatchWorker | None = None
        self.device = "cpu"

    def run(self, setup: list[Any], blob: bytes) -> bytes:
        state = pickle.loads(blob)
        if state.failure is None:
            try:
                if self.needs_setup and self.worker is None:
                    self.worker = BatchWorker(pickle.loads(_fetch(setup[0])), self.device)
                self.step(state)
            except Exception as exc:
                state.failure = (f"{type(self).__name__} failed: {type(exc).__name__}: {exc}\n"
                                 f"{traceback.format_exc(limit=3)}")
        return self.finish(state)

    def ping(self) -> bool:
        """Answers while the actor lives (`ray_pools.ActorPools.replace_dead`)."""
        return True

    def step(self, state: InFlight) -> None:
        raise NotImplementedError

    def finish(self, state: InFlight) -> bytes:
        return dumps(state)


def _fetch(setup: Any) -> bytes:
    """The setup's bytes: given as they are (called in this process), or through Ray's reference."""
    if isinstance(setup, bytes):
        return setup
    import ray

    data: bytes = ray.get(setup)
    return data


def decode_batch(state: InFlight, max_pixels: int) -> None:
    """Reads each image of the batch (an unreadable one is an ImageError, an error row at the end)."""
    start = time.perf_counter()
    state.images = [decode_image(path, max_pixels) for path in image_paths(state.packed)]
    state.features = [{} for _ in state.images]
    state.reports.append(BatchReport([], stage_seconds={"decode": time.perf_counter() - start}))


def apply_metrics(state: InFlight, worker: BatchWorker) -> None:
    """Each job's metric on its image's features: the batch's rows, in `score_batch`'s order."""
    groups = unpack(state.packed)
    ontology = worker.setup.ontology
    start = time.perf_counter()
    rows = metric_rows(groups, state.images, state.features, ontology)
    state.reports.append(BatchReport(rows, stage_seconds={"metrics": time.perf_counter() - start}))


def final_reports(state: InFlight) -> bytes:
    """Every actor's report, the last one holding the rows (error rows for a batch an actor failed)."""
    if state.failure is not None:
        state.reports.append(BatchReport(_failed_rows(pickle.loads(state.packed), f"scoring worker failed: {state.failure}")))
    return pickle.dumps(state.reports, protocol=pickle.HIGHEST_PROTOCOL)


class Decoder(_Actor):
    """A decode pool of its own: before a first stage group whose actors hold a GPU share."""

    needs_setup = False

    def __init__(self, max_pixels: int):
        super().__init__()
        self.max_pixels = max_pixels

    def step(self, state: InFlight) -> None:
        decode_batch(state, self.max_pixels)


class StageRunner(_Actor):
    """Runs STAGES (in dependency order) on the images that want them; the models load once per actor. A CPU
    group's actors also decode (first group: `max_pixels` given) and apply the metrics (last group: `score`), so
    a CPU run is one pool whose actors do what a `--cpu-workers` process does, and no pixels cross the object
    store."""

    def __init__(self, stages: tuple[str, ...], device: str, keep_images: bool, max_pixels: int | None = None,
                 score: bool = False):
        super().__init__()
        self.device, self.stages, self.keep_images = device, tuple(stages), keep_images
        self.max_pixels, self.score = max_pixels, score

    def step(self, state: InFlight) -> None:
        assert self.worker is not None
        if self.max_pixels is not None:
            decode_batch(state, self.max_pixels)
        groups = unpack(state.packed)
        live = [i for i, image in enumerate(state.images) if isinstance(image, np.ndarray)]
        wanted = stages_wanted(groups)
        seconds: dict[str, float] = {}
        self.worker.new_ledger()
        for name in self.stages:
            run_stage(name, state.images, groups, state.features, [i for i in live if name in wanted[i]],
                      self.worker.ctx, self.worker.setup.ontology, seconds)
        state.reports.append(self.worker.report([], seconds))
        if self.score:
            apply_metrics(state, self.worker)
        elif not self.keep_images:   # no later actor reads pixels: they need not travel further
            state.images = [image if isinstance(image, Exception) else None for image in state.images]

    def finish(self, state: InFlight) -> bytes:
        return final_reports(state) if self.score else dumps(state)


class Scorer(_Actor):
    """A metrics pool of its own: after a last stage group whose actors hold a GPU share."""

    def step(self, state: InFlight) -> None:
        assert self.worker is not None
        apply_metrics(state, self.worker)

    def finish(self, state: InFlight) -> bytes:
        return final_reports(state)
