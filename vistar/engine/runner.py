"""`vistar score`: map images to prompts, compute each needed feature once per image in batches,
apply the pure metrics, and append the rows to the crash-safe store.

Order is fixed (model, prompt id, sample), so scores do not depend on batch size or worker count.
Every matched image ends with one row per metric of its angle: scored (`ok`), `error` (bad image, invalid
prompt, failing stage or metric) or `skipped` (missing weight or dependency; retried on the next run).
See docs/engine.md for keys, resume semantics and the bad-image table.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import math
import multiprocessing
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..models.errors import MissingWeightError
from ..models.provenance import loaded_models
from ..ontology import Ontology
from ..prompts_dsl import Prompt, read_prompts, resolved_controls, validate_prompt
from ..prompts_dsl.validate import as_issue
from . import registry
from .hashes import hash_files
from .images import DEFAULT_MAX_PIXELS, ImageError, ImageRecord, discover, file_sha256, load_rgb
from .runmeta import hardware, versions, write_json_atomic
from .store import ResultStore

STATUSES = ("ok", "error", "skipped")


@dataclass
class ScoreConfig:
    images: Path
    prompts: Path
    out: Path
    angles: list[str] | None = None
    device: str = "cpu"
    batch_size: int = 8
    workers: int = 0
    ontology: Path | None = None
    weights: Path | None = None
    manifest: Path | None = None
    model_paths: dict[str, str] = field(default_factory=dict)
    max_pixels: int = DEFAULT_MAX_PIXELS
    retry_errors: bool = False
    options: dict = field(default_factory=dict)
    command: str = ""


@dataclass
class Job:
    """One (image, metric) to score."""

    record: ImageRecord
    sha256: str
    prompt: Prompt
    metric: registry.Metric
    params: dict
    key: str


@dataclass
class RunSummary:
    scored: int = 0
    reused: int = 0
    rows_by_status: dict[str, int] = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)

    def count(self, rows: list[dict]) -> None:
        for row in rows:
            self.rows_by_status[row["status"]] = self.rows_by_status.get(row["status"], 0) + 1
        self.scored += len(rows)


@dataclass
class _Scorer:
    """A metric resolved for this run, or why it cannot run (its module or a stage failed to import)."""

    name: str
    metric: registry.Metric | None
    signature: str = ""          # metric version + params + versions/params of every stage it depends on
    unavailable: str | None = None


class RunLocked(RuntimeError):
    pass


def _hash(*parts) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:32]


def _params_hash(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:12]


def run_score(cfg: ScoreConfig, progress: Callable[[int, int], None] | None = None) -> RunSummary:
    cfg.out.mkdir(parents=True, exist_ok=True)
    lock = open(cfg.out / ".lock", "a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "?"
        lock.close()
        raise RunLocked(f"{cfg.out}: another `vistar score` (pid {holder}) is writing to this run directory") from None
    try:
        lock.truncate(0)
        lock.write(str(os.getpid()))
        lock.flush()
        return _run_locked(cfg, progress)
    finally:
        lock.close()  # closing releases the lock; a killed process releases it too


def _run_locked(cfg: ScoreConfig, progress) -> RunSummary:
    summary = RunSummary()
    ontology = Ontology.load(cfg.ontology, overrides=[cfg.weights] if cfg.weights else None)
    if cfg.angles:
        unknown = [a for a in cfg.angles if a not in ontology.angles]
        if unknown:
            raise ValueError(f"--angles: unknown angle code(s) {', '.join(unknown)} (known: {', '.join(ontology.angles)})")
    prompts, invalid = _load_prompts(cfg, ontology, summary)
    mapping = discover(cfg.images, set(prompts) | set(invalid), cfg.manifest)
    summary.problems += [{"kind": "unmatched_image", "item": i, "message": why} for i, why in mapping.unmatched_images.items()]
    summary.problems += [{"kind": "prompt_without_image", "item": p, "message": "no image for this prompt"}
                         for p in mapping.prompts_without_images
                         if p in prompts and (not cfg.angles or prompts[p].angle in cfg.angles)]

    store = ResultStore(cfg.out)
    meta = _run_meta(cfg, ontology)
    write_json_atomic(cfg.out / "run.json", {**meta, "status": "running"})
    scorers: dict[str, _Scorer] = {}
    jobs, rows, stale = _plan(cfg, ontology, prompts, invalid, mapping.records, store.existing(), scorers, summary)
    meta["metric_versions"] = {n: s.metric.version for n, s in sorted(scorers.items()) if s.metric}
    meta["stage_versions"] = _stage_versions(scorers)
    _write_problems(cfg.out, summary.problems)
    store.forget(stale)  # rows about to be replaced go first, so the dataset never holds two rows for one (image, metric)
    store.write(rows)
    summary.count(rows)

    ctx = registry.StageContext(device=cfg.device, model_paths=cfg.model_paths,
                                features=ontology.data.get("features") or {}, options=cfg.options)
    groups = _group_by_image(jobs)
    done = 0
    if progress:
        progress(0, len(groups))
    with _decoder(cfg.workers) as decode:
        for batch in _batches(groups, cfg.batch_size):
            batch_rows = _score_batch(batch, ctx, ontology, cfg, decode)
            store.write(batch_rows)
            summary.count(batch_rows)
            done += len(batch)
            if progress:
                progress(done, len(groups))
    store.compact()
    meta["models"] = loaded_models()
    meta["counts"] = {"rows_written": summary.scored, "rows_reused": summary.reused, **summary.rows_by_status}
    write_json_atomic(cfg.out / "run.json", {**meta, "status": "complete", "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    return summary


def _load_prompts(cfg: ScoreConfig, ontology: Ontology, summary: RunSummary):
    """Valid prompts by id, and invalid ids -> (the prompt if it parsed, why it cannot be used)."""
    parsed = read_prompts(cfg.prompts)
    for exc in parsed.errors:
        issue = as_issue(exc)
        summary.problems.append({"kind": "prompt_error", "item": issue.location, "message": str(issue)})
    invalid: dict[str, tuple[Prompt | None, str]] = {pid: (None, as_issue(exc).message) for pid, exc in parsed.failed_ids.items()}
    prompts: dict[str, Prompt] = {}
    for prompt in parsed.prompts:
        issues = validate_prompt(prompt, ontology)
        for issue in issues:
            summary.problems.append({"kind": f"prompt_{issue.severity}", "item": prompt.id, "message": str(issue)})
        errors = [f"field '{i.field}': {i.message}" for i in issues if i.severity == "error"]
        if prompt.id in invalid:  # a duplicate id: which prompt the images answer is ambiguous
            invalid[prompt.id] = (prompt, invalid[prompt.id][1])
        elif errors:
            invalid[prompt.id] = (prompt, "; ".join(errors))
        else:
            prompts[prompt.id] = prompt
    return prompts, invalid


def _scorer(name: str, ontology: Ontology) -> _Scorer:
    try:
        metric = registry.metric(name)
        stages = registry.stage_order(set(metric.features))
        parts = [metric.name, metric.version, _params_hash(ontology.metric_params(name))]
        for stage_name in stages:
            stage = registry.feature_stage(stage_name)
            features = ontology.data.get("features") or {}
            parts.append(f"{stage.name}:{stage.version}:{_params_hash(features.get(stage_name) or {})}")
        return _Scorer(name, metric, "|".join(parts))
    except Exception as exc:  # a missing optional dependency must not end the run
        return _Scorer(name, None, unavailable=f"metric {name} unavailable: {type(exc).__name__}: {exc}")


def _plan(cfg, ontology, prompts, invalid, records, existing, scorers, summary):
    """Jobs still to score, rows known without scoring (errors, unavailable metrics), and stale keys to forget.

    A row is reused when the visible row for its (image, model, prompt_id, sample, metric) has the same key
    and status ok (or error, unless --retry-errors); any other visible row for it is stale."""
    jobs, rows, stale = [], [], set()
    todo = []  # (record, prompt, why it is invalid or None)
    for rec in records:
        prompt, why = (prompts[rec.prompt_id], None) if rec.prompt_id in prompts else invalid[rec.prompt_id]
        if prompt is None:
            summary.problems.append({"kind": "image_of_invalid_prompt", "item": rec.rel,
                                     "message": f"prompt '{rec.prompt_id}' could not be read: {why}"})
        elif not cfg.angles or prompt.angle in cfg.angles:
            todo.append((rec, prompt, why))
    shas = hash_files([rec.path for rec, _, _ in todo], cfg.out)

    def settle(rec: ImageRecord, name: str, key: str) -> bool:
        """True when the visible row can be reused; otherwise marks it stale."""
        seen = existing.get((rec.rel, rec.model, rec.prompt_id, rec.sample, name))
        if seen is None:
            return False
        if seen[0] == key and (seen[1] == "ok" or (seen[1] == "error" and not cfg.retry_errors)):
            summary.reused += 1
            return True
        stale.add(seen[0])
        return False

    for rec, prompt, why in todo:
        names = _metric_names(prompt)
        sha = shas[rec.path]
        if isinstance(sha, OSError):
            for name in names:
                key = _hash(rec.rel, "unreadable", prompt.fingerprint, name)
                if not settle(rec, name, key):
                    rows.append(_row(rec, "", prompt, name, None, None, "error", f"cannot read file: {sha}", {}, key))
            continue
        for name in names:
            if why is not None:
                key = _hash(rec.rel, sha, prompt.fingerprint, name, "invalid-prompt", why)
                if not settle(rec, name, key):
                    rows.append(_row(rec, sha, prompt, name, None, None, "error", f"invalid prompt '{prompt.id}': {why}", {}, key))
                continue
            if name not in scorers:
                scorers[name] = _scorer(name, ontology)
                if scorers[name].unavailable:
                    summary.problems.append({"kind": "metric_unavailable", "item": name, "message": scorers[name].unavailable})
            scorer = scorers[name]
            if scorer.metric is None:
                key = _hash(rec.rel, sha, prompt.fingerprint, name, "unavailable")
                if not settle(rec, name, key):
                    rows.append(_row(rec, sha, prompt, name, None, None, "skipped", scorer.unavailable, {}, key))
                continue
            key = _hash(rec.rel, sha, prompt.fingerprint, scorer.signature)
            if not settle(rec, name, key):
                jobs.append(Job(rec, sha, prompt, scorer.metric, ontology.metric_params(name), key))
    return jobs, rows, stale


def _metric_names(prompt: Prompt) -> list[str]:
    """The metrics that score this prompt (a `protocol=` control can route it to a sibling protocol's metrics);
    the angle code itself when none is registered, so the image still gets a (skipped) row saying so."""
    try:
        names = registry.metrics_for_prompt(prompt)
    except Exception:  # the protocol table failed to import: fall back to the angle's metrics
        names = registry.metrics_for_angle(prompt.angle)
    return names or [prompt.angle]


def _stage_versions(scorers: dict[str, _Scorer]) -> dict[str, str]:
    out = {}
    for scorer in scorers.values():
        if scorer.metric is not None:
            for name in registry.stage_order(set(scorer.metric.features)):
                out[name] = registry.feature_stage(name).version
    return dict(sorted(out.items()))


def _group_by_image(jobs: list[Job]) -> list[list[Job]]:
    """Jobs of one (image, prompt) together: the image is decoded and its features computed once for all its metrics."""
    groups: dict[ImageRecord, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.record, []).append(job)
    return list(groups.values())


def _batches(items: list, size: int) -> Iterable[list]:
    size = max(1, size)
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _decode(args):
    path, max_pixels = args
    try:
        return load_rgb(path, max_pixels)
    except ImageError as exc:
        return exc
    except Exception as exc:  # a decoder bug must not end the run
        return ImageError(f"cannot decode image: {type(exc).__name__}: {exc}")


class _decoder:
    """`decode(paths, max_pixels) -> list[array | ImageError]`, in-process or on a worker pool that lives for one run.

    Workers start with `forkserver` so they never inherit model threads (onnxruntime, torch) of this process."""

    def __init__(self, workers: int):
        self.workers, self.pool = workers, None

    def __enter__(self):
        if self.workers > 0:
            self.pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("forkserver"))
        return self

    def __call__(self, paths: list[Path], max_pixels: int) -> list:
        args = [(p, max_pixels) for p in paths]
        return list(self.pool.map(_decode, args)) if self.pool else [_decode(a) for a in args]

    def __exit__(self, *exc):
        if self.pool:
            self.pool.shutdown(cancel_futures=True)


def _score_batch(groups: list[list[Job]], ctx, ontology, cfg, decode) -> list[dict]:
    images = decode([g[0].record.path for g in groups], cfg.max_pixels)
    rows: list[dict] = []
    live = []
    for group, image in zip(groups, images):
        if isinstance(image, Exception):
            rows += [_job_row(j, None, "error", f"image: {image}", {}) for j in group]
        else:
            live.append((group, image))
    needed = {f for group, _ in live for job in group for f in job.metric.features}
    features = [dict() for _ in live]
    for name in registry.stage_order(needed):
        stage = registry.feature_stage(name)
        idx = []
        for i in range(len(live)):
            failed = next((features[i][d] for d in stage.requires if isinstance(features[i].get(d), BaseException)), None)
            if failed is None:
                idx.append(i)
            else:
                features[i][name] = failed  # a failed dependency fails this stage the same way (skip stays skip)
        inputs = [registry.StageInput(live[i][1], live[i][0][0].prompt, resolved_controls(live[i][0][0].prompt, ontology),
                                      {d: features[i][d] for d in stage.requires}) for i in idx]
        try:
            outputs = list(stage.compute(inputs, ctx)) if inputs else []
            if len(outputs) != len(inputs):
                raise RuntimeError(f"stage '{name}' returned {len(outputs)} outputs for {len(inputs)} images")
        except MissingWeightError as exc:
            outputs = [exc] * len(inputs)
        except Exception as exc:  # a stage crash costs this batch's rows for this stage, never the run
            exc.add_note(traceback.format_exc(limit=3))
            outputs = [exc] * len(inputs)
        for i, out in zip(idx, outputs):
            features[i][name] = out
    for (group, _), feats in zip(live, features):
        for job in group:
            rows.append(_apply_metric(job, feats, ontology))
    return rows


def _apply_metric(job: Job, feats: dict, ontology) -> dict:
    for name in job.metric.features:
        value = feats.get(name)
        if isinstance(value, MissingWeightError):
            return _job_row(job, None, "skipped", str(value), {})
        if isinstance(value, BaseException):
            return _job_row(job, None, "error", f"feature '{name}' failed: {type(value).__name__}: {value}", {})
    try:
        result = job.metric.fn({n: feats[n] for n in job.metric.features}, resolved_controls(job.prompt, ontology), job.params, job.prompt)
    except MissingWeightError as exc:
        return _job_row(job, None, "skipped", str(exc), {})
    except Exception as exc:
        return _job_row(job, None, "error", f"metric {job.metric.name} failed: {type(exc).__name__}: {exc}", {})
    problem = _check_result(result)
    if problem:
        details = getattr(result, "details", None)
        return _job_row(job, None, "error", f"metric {job.metric.name} {problem}", details if isinstance(details, dict) else {})
    score = None if result.status != "ok" else float(result.score)
    return _job_row(job, score, result.status, result.error, result.details)


def _check_result(result) -> str | None:
    """Why a metric's return value cannot be stored as-is (None when it can)."""
    if not isinstance(result, registry.MetricResult):
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


def _job_row(job: Job, score, status, error, details) -> dict:
    return _row(job.record, job.sha256, job.prompt, job.metric.name, job.metric.version, score, status, error, details, job.key)


def _row(rec, sha, prompt, metric_name, metric_version, score, status, error, details, key) -> dict:
    return {"image": rec.rel, "image_sha256": sha, "model": rec.model, "prompt_id": rec.prompt_id, "sample": rec.sample,
            "role": prompt.role, "angle": prompt.angle, "metric": metric_name, "score": score, "status": status,
            "error": error, "details": details, "set": prompt.set, "metric_version": metric_version, "key": key}


def _run_meta(cfg: ScoreConfig, ontology: Ontology) -> dict:
    previous = []
    try:
        old = json.loads((cfg.out / "run.json").read_text())
        previous = old.get("history", []) + [{k: old.get(k) for k in ("command", "started", "finished", "status")}]
    except (OSError, ValueError, AttributeError):
        pass
    prompts_sha = file_sha256(cfg.prompts) if Path(cfg.prompts).is_file() else None
    return {"command": cfg.command or " ".join(sys.argv), "images": str(Path(cfg.images).resolve()),
            "prompts": str(Path(cfg.prompts).resolve()), "prompts_sha256": prompts_sha,
            "manifest": str(Path(cfg.manifest).resolve()) if cfg.manifest else None,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "versions": versions(), "hardware": hardware(),
            "ontology_hash": ontology.hash, "device": cfg.device, "batch_size": cfg.batch_size, "workers": cfg.workers,
            "angles": cfg.angles, "max_pixels": cfg.max_pixels, "retry_errors": cfg.retry_errors, "history": previous}


def _write_problems(out: Path, problems: list[dict]) -> None:
    path = out / "problems.jsonl"
    tmp = path.with_name(".problems.jsonl.tmp")
    tmp.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in problems))
    tmp.replace(path)
