"""Scoring one batch of decoded images (decoding is `prefetch.py`'s job): run each needed stage once over the batch in
dependency order, apply the pure metrics, and turn every failure into a row instead of an exception."""
from __future__ import annotations

import math
import time
import traceback
from typing import Any, Sequence, cast

import numpy as np

from ..api import FeatureStage, MetricResult, StageContext, StageInput
from ..models.errors import MissingWeightError, as_missing_dependency
from ..ontology import Ontology
from ..prompts_dsl import resolved_controls
from . import registry
from .plan import Job, Row, row

Features = dict[str, Any]   # stage name -> one image's output (or the exception that replaced it)
Decoded = np.ndarray | Exception   # an image, or why its file could not be decoded

STATUSES = ("ok", "error", "skipped")


def score_batch(groups: list[list[Job]], images: Sequence[Decoded], ctx: StageContext, ontology: Ontology,
                timings: dict[str, float] | None = None) -> list[Row]:
    """Rows for every job of the batch (`images[i]`: group i's decoded image or the ImageError of its file);
    each stage runs once over the images that still need it. `timings`, when given, gains the seconds spent in
    each stage and in the metrics (what `benchmarks/bench_executor.py` reports as per-stage utilisation)."""
    timings = {} if timings is None else timings
    live = [i for i, image in enumerate(images) if not isinstance(image, Exception)]
    wanted = stages_wanted(groups)  # each image runs only the stages its own metrics need (a batch can mix angles)
    features: list[Features] = [dict() for _ in groups]
    needed: set[str] = set().union(*(wanted[i] for i in live))
    for name in registry.stage_order(needed):
        run_stage(name, images, groups, features, [i for i in live if name in wanted[i]], ctx, ontology, timings)
    start = time.perf_counter()
    rows = metric_rows(groups, images, features, ontology)
    timings["metrics"] = timings.get("metrics", 0.0) + time.perf_counter() - start
    return rows


def metric_rows(groups: list[list[Job]], images: Sequence[Decoded | None], features: list[Features],
                ontology: Ontology) -> list[Row]:
    """The batch's rows in image order (an image that failed to decode gives its error rows in its place), so the
    store's order does not depend on how images fell into batches."""
    rows: list[Row] = []
    for group, image, feats in zip(groups, images, features):
        if isinstance(image, Exception):
            rows += [_job_row(j, None, "error", f"image: {image}", {}) for j in group]
        else:
            rows += [_apply_metric(job, feats, ontology) for job in group]
    return rows


def stages_wanted(groups: list[list[Job]]) -> list[set[str]]:
    """Per image, the feature stages its jobs' metrics need, dependencies included."""
    return [set(registry.stage_order({f for job in group for f in job.metric.all_features})) for group in groups]


def failed_dependency(stage: FeatureStage, feats: Features) -> BaseException | None:
    """The failure or skip (an exception value) of the first feature STAGE requires that has one: the stage does
    not run on that image and takes that value, so a skip stays a skip down the chain."""
    return next((feats[d] for d in stage.requires if isinstance(feats.get(d), BaseException)), None)


def run_stage(name: str, images: Sequence[Decoded | None], groups: list[list[Job]], features: list[Features], wanting: list[int],
              ctx: StageContext, ontology: Ontology, timings: dict[str, float]) -> None:
    """Stage NAME once over the images at indices WANTING, into `features[i][name]`: a failed dependency fails it
    the same way (a skip stays a skip), a raising stage gives each image the exception, a missing weight or
    optional package its skip. Shared by `score_batch` and the Ray pipeline's stage actors."""
    stage = registry.feature_stage(name)
    idx = []
    for i in wanting:
        failed = failed_dependency(stage, features[i])
        if failed is None:
            idx.append(i)
        else:
            features[i][name] = failed
    inputs = [StageInput(cast(np.ndarray, images[i]), groups[i][0].prompt,   # WANTING indexes decoded images only
                         resolved_controls(groups[i][0].prompt, ontology), {d: features[i][d] for d in stage.requires},
                         groups[i][0].record.path)
              for i in idx]
    start = time.perf_counter()
    try:
        outputs: list[Any] = list(stage.compute(inputs, ctx)) if inputs else []
        if len(outputs) != len(inputs):
            raise RuntimeError(f"stage '{name}' returned {len(outputs)} outputs for {len(inputs)} images")
    except MissingWeightError as exc:
        outputs = [exc] * len(inputs)
    except Exception as exc:  # a stage crash costs this batch's rows for this stage, never the run
        missing = as_missing_dependency(exc)   # an optional package not installed: skipped, naming the install
        if missing is None:
            exc.add_note(traceback.format_exc(limit=3))
        outputs = [missing or exc] * len(inputs)
    timings[name] = timings.get(name, 0.0) + time.perf_counter() - start
    for i, out in zip(idx, outputs):
        features[i][name] = out


def _apply_metric(job: Job, feats: Features, ontology: Ontology) -> Row:
    for name in job.metric.features:
        value = feats.get(name)
        if isinstance(value, MissingWeightError):
            return _job_row(job, None, "skipped", str(value), {})
        if isinstance(value, BaseException):
            return _job_row(job, None, "error", f"feature '{name}' failed: {type(value).__name__}: {value}", {})
    try:
        result = job.metric.fn(job.metric.inputs(feats), resolved_controls(job.prompt, ontology), job.params, job.prompt)
    except MissingWeightError as exc:
        return _job_row(job, None, "skipped", str(exc), {})
    except Exception as exc:
        return _job_row(job, None, "error", f"metric {job.metric.name} failed: {type(exc).__name__}: {exc}", {})
    problem = _check_result(result)
    if problem:
        details = getattr(result, "details", None)
        return _job_row(job, None, "error", f"metric {job.metric.name} {problem}", details if isinstance(details, dict) else {})
    score = float(result.score) if result.status == "ok" and result.score is not None else None
    return _job_row(job, score, result.status, result.error, result.details)


def _check_result(result: object) -> str | None:
    """Why a metric's return value cannot be stored as-is (None when it can)."""
    if not isinstance(result, MetricResult):
        return f"returned {type(result).__name__}, not MetricResult"
    if result.status not in STATUSES:
        return f"returned status {result.status!r} (expected one of {', '.join(STATUSES)})"
    if result.status == "ok":
        score = result.score
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            return f"returned a non-finite or non-numeric score ({score!r})"
        if not 0.0 <= score <= 1.0:
            return f"returned a score outside [0, 1] ({score!r})"
    return None


def _job_row(job: Job, score: float | None, status: str, error: str | None, details: dict[str, Any]) -> Row:
    return row(job.record, job.sha256, job.prompt, job.metric.name, job.metric.version, score, status, error, details, job.key)
