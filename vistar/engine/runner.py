"""`vistar score`: map images to prompts, compute each needed feature once per image in batches,
apply the pure metrics, and append the rows to the crash-safe store.

Order is fixed (model, prompt id, sample), so scores do not depend on batch size or worker count.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
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
from .images import DEFAULT_MAX_PIXELS, ImageError, ImageRecord, discover, file_sha256, load_rgb
from .runmeta import hardware, versions, write_json_atomic
from .store import ResultStore


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


class RunLocked(RuntimeError):
    pass


def _params_hash(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]


def _job_key(rec: ImageRecord, sha: str, prompt: Prompt, metric: registry.Metric, params: dict) -> str:
    parts = [rec.rel, sha, prompt.fingerprint, metric.name, metric.version, _params_hash(params)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def run_score(cfg: ScoreConfig, progress: Callable[[int, int], None] | None = None) -> RunSummary:
    cfg.out.mkdir(parents=True, exist_ok=True)
    lock = open(cfg.out / ".lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunLocked(f"{cfg.out}: another `vistar score` is writing to this run directory") from None
    try:
        return _run_locked(cfg, progress)
    finally:
        lock.close()


def _run_locked(cfg: ScoreConfig, progress) -> RunSummary:
    summary = RunSummary()
    ontology = Ontology.load(cfg.ontology, overrides=[cfg.weights] if cfg.weights else None)
    prompts = _load_prompts(cfg, ontology, summary)
    mapping = discover(cfg.images, set(prompts), cfg.manifest)
    summary.problems += [{"kind": "unmatched_image", "item": i, "message": "no prompt with this id"} for i in mapping.unmatched_images]
    summary.problems += [{"kind": "prompt_without_image", "item": p, "message": "no image for this prompt"} for p in mapping.prompts_without_images]

    store = ResultStore(cfg.out)
    existing = store.existing()
    meta = _run_meta(cfg, ontology)
    write_json_atomic(cfg.out / "run.json", {**meta, "status": "running"})

    jobs, hash_errors = _plan(cfg, ontology, prompts, mapping.records, existing, summary)
    if hash_errors:
        store.write(hash_errors)
    ctx = registry.StageContext(device=cfg.device, model_paths=cfg.model_paths,
                                features=ontology.data.get("features") or {}, options=cfg.options)
    by_image = _group_by_image(jobs)
    total, done = len(by_image), 0
    for batch in _batches(by_image, cfg.batch_size):
        rows = _score_batch(batch, ctx, ontology, cfg)
        store.write(rows)
        for row in rows:
            summary.rows_by_status[row["status"]] = summary.rows_by_status.get(row["status"], 0) + 1
        summary.scored += len(rows)
        done += len(batch)
        if progress:
            progress(done, total)
    store.compact()
    _write_problems(cfg.out, summary.problems)
    meta["models"] = loaded_models()
    write_json_atomic(cfg.out / "run.json", {**meta, "status": "complete", "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    return summary


def _load_prompts(cfg: ScoreConfig, ontology: Ontology, summary: RunSummary) -> dict[str, Prompt]:
    parsed = read_prompts(cfg.prompts)
    for exc in parsed.errors:
        issue = as_issue(exc)
        summary.problems.append({"kind": "prompt_error", "item": issue.location, "message": str(issue)})
    prompts = {}
    for prompt in parsed.prompts:
        issues = validate_prompt(prompt, ontology)
        for issue in issues:
            summary.problems.append({"kind": f"prompt_{issue.severity}", "item": prompt.id, "message": str(issue)})
        if not any(i.severity == "error" for i in issues):
            prompts[prompt.id] = prompt
    return prompts


def _plan(cfg, ontology, prompts, records, existing, summary):
    """Jobs still to score; images whose bytes cannot even be read become error rows right away."""
    jobs, errors = [], []
    for rec in records:
        prompt = prompts[rec.prompt_id]
        if cfg.angles and prompt.angle not in cfg.angles:
            continue
        try:
            sha = file_sha256(rec.path)
        except OSError as exc:
            errors.append(_row(rec, "", prompt, None, None, "error", f"cannot read file: {exc}", {}, ""))
            continue
        for name in registry.metrics_for_angle(prompt.angle):
            metric = registry.metric(name)
            params = ontology.metric_params(name)
            key = _job_key(rec, sha, prompt, metric, params)
            status = existing.get(key)
            if status == "ok" or (status == "error" and not cfg.retry_errors):
                summary.reused += 1
                continue
            jobs.append(Job(rec, sha, prompt, metric, params, key))
    return jobs, errors


def _group_by_image(jobs: list[Job]) -> list[list[Job]]:
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.record.rel, []).append(job)
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


_POOL: dict[int, ProcessPoolExecutor] = {}


def _decode_all(paths: list[Path], cfg: ScoreConfig) -> list:
    args = [(p, cfg.max_pixels) for p in paths]
    if cfg.workers <= 0:
        return [_decode(a) for a in args]
    pool = _POOL.get(cfg.workers) or _POOL.setdefault(cfg.workers, ProcessPoolExecutor(cfg.workers))
    return list(pool.map(_decode, args))


def _score_batch(groups: list[list[Job]], ctx, ontology, cfg) -> list[dict]:
    images = _decode_all([g[0].record.path for g in groups], cfg)
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
            outputs = stage.compute(inputs, ctx) if inputs else []
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
    except Exception as exc:
        return _job_row(job, None, "error", f"metric {job.metric.name} failed: {type(exc).__name__}: {exc}", {})
    return _job_row(job, result.score, result.status, result.error, result.details)


def _job_row(job: Job, score, status, error, details) -> dict:
    return _row(job.record, job.sha256, job.prompt, job.metric, score, status, error, details, job.key)


def _row(rec, sha, prompt, metric, score, status, error, details, key) -> dict:
    return {"image": rec.rel, "image_sha256": sha, "model": rec.model, "prompt_id": rec.prompt_id, "sample": rec.sample,
            "role": prompt.role, "angle": prompt.angle, "metric": metric.name if metric else prompt.angle,
            "score": score, "status": status, "error": error, "details": details, "set": prompt.set,
            "metric_version": metric.version if metric else None,
            "key": key or hashlib.sha256(f"{rec.rel}\x1f{prompt.fingerprint}\x1funreadable".encode()).hexdigest()[:32]}


def _run_meta(cfg: ScoreConfig, ontology: Ontology) -> dict:
    metrics = {name: registry.metric(name).version for name in registry.METRICS}
    return {"command": cfg.command or " ".join(sys.argv), "images": str(Path(cfg.images).resolve()),
            "prompts": str(Path(cfg.prompts).resolve()), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "versions": versions(), "hardware": hardware(), "ontology_hash": ontology.hash, "metric_versions": metrics,
            "device": cfg.device, "batch_size": cfg.batch_size}


def _write_problems(out: Path, problems: list[dict]) -> None:
    path = out / "problems.jsonl"
    tmp = path.with_name(".problems.jsonl.tmp")
    tmp.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in problems))
    tmp.replace(path)
