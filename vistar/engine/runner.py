"""`vistar score`: map images to prompts, plan what is missing (`plan.py`), decode batches ahead of scoring
(`prefetch.py`), compute each needed feature once per image in batches and apply the pure metrics (`batch.py`),
and append the rows to the crash-safe store.

Order is fixed (model, prompt id, sample), so scores do not depend on batch size or worker count.
Every matched image ends with one row per metric of its angle: scored (`ok`), `error` (bad image, invalid
prompt, failing stage or metric) or `skipped` (missing weight or dependency; retried on the next run).
See docs/engine.md for keys, resume semantics and the bad-image table.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

from ..api import RunOptions, StageContext
from ..atomic import write_text_atomic
from ..models import random_init
from ..models.provenance import clear_loaded, loaded_models
from ..ontology import Ontology
from ..runtime.device import prepare_process, resolve_device, stage_devices
from ..runtime.precision import stage_precisions
from ..textsafe import escape_unsafe, json_escape
from . import registry, shards
from .executors import open_executor
from .images import DEFAULT_MAX_PIXELS, ImageRecord, Mapping, discover, file_sha256
from .outcome import RunIOError, nothing_reason
from .params import check_params
from .plan import Job, Problem, RunSummary, Scorer, load_prompts, plan_run, stage_versions
from .runmeta import hardware, mark_failed, mark_interrupted, sigterm_interrupts, versions, write_json_atomic
from .shards import Shard
from .store import ResultStore

Progress = Callable[[int, int], None] | None   # (images done, images to do), after each batch
T = TypeVar("T")
SCORER_COMMAND = "vistar.Scorer"   # run.json's `command` for a run folder vistar.Scorer created


@dataclass
class ScoreConfig:
    images: Path
    prompts: Path
    out: Path
    angles: list[str] | None = None
    device: str = "cpu"              # cpu, cuda, cuda:N or auto: run_score resolves it to the device used
    batch_size: int = 8
    workers: int = 0
    prefetch: int = 2             # batches decoded ahead of the one being scored (0: decode on demand)
    ontology: Path | None = None
    weights: Path | None = None
    manifest: Path | None = None
    model_paths: dict[str, str] = field(default_factory=dict)
    max_pixels: int = DEFAULT_MAX_PIXELS
    retry_errors: bool = False
    verify: bool = False          # re-hash every image, trusting no cached hash (`--verify`)
    options: RunOptions = field(default_factory=RunOptions)
    judge_ledger: Any = None      # collects the judge's calls and cost (vistar.vlm.prices.Ledger), for the CLI's report
    command: str = ""
    shard: Shard | None = None    # score only this shard's images (docs/engine.md, "Sharding")
    device_requested: str = ""     # what --device said (`auto`), set by run_score
    executor: str = "local"        # local or ray (docs/scaling.md)
    cpu_workers: int | None = 1    # local: scoring processes (None: usable cores for long CPU runs); ray: actors
    ray_address: str | None = None  # --executor ray: `auto` or HOST:PORT of a running cluster (None: start one here)
    recorded: dict[str, Any] = field(default_factory=dict)  # what run.json also says, from the caller (e.g. judge_templates)
    benchmark: bool = False        # a benchmark's throwaway run (benchmarks/bench_end_to_end.py): random_init allowed


class RunLocked(RuntimeError):
    pass


def run_score(cfg: ScoreConfig, progress: Progress = None, *,
              warm: StageContext | None = None) -> RunSummary:
    """`warm`: a stage context whose models are already loaded, so `vistar bench` can time a run without model
    loading; its options apply as they are (bench's random_init among them: the score CLI never passes one)."""
    if random_init.wanted(cfg.options) and not cfg.benchmark:   # random weights give meaningless scores: benchmarks only
        raise ValueError("random_init is a benchmarking option (`vistar bench --random-init`); scores need the real weights")
    if cfg.executor == "ray" and cfg.ray_address and cfg.device != "cpu":   # the cluster's GPUs count, not this machine's
        from .executors.ray_exec import check_cluster_device, cluster_device, ray_session
        from .executors.ray_instance import RAY_LOG

        check_cluster_device(cfg.device)
        with ray_session(cfg.ray_address, cfg.out / RAY_LOG) as ray:   # connected before anything is written; the executor reuses it
            return _run_on(cfg, cluster_device(ray, cfg.device), progress, warm)
    return _run_on(cfg, resolve_device(cfg.device), progress, warm)


def _run_on(cfg: ScoreConfig, device: str, progress: Progress, warm: StageContext | None) -> RunSummary:
    """The run on DEVICE, the device `--device` resolved to (no GPU: refused before this, nothing written)."""
    cfg = replace(cfg, device=device, device_requested=cfg.device_requested or cfg.device)
    if warm is not None and warm.device != cfg.device:
        raise ValueError(f"warm context is on {warm.device}, the run on {cfg.device}")
    # every check that needs no run folder comes first: a refused run leaves nothing on disk
    ontology = Ontology.load(cfg.ontology, overrides=[cfg.weights] if cfg.weights else None)
    if warm is not None and warm.features != (ontology.data.get("features") or {}):
        raise ValueError("warm context holds other stage parameters than this run's ontology")
    check_params(ontology)   # an unknown key or a wrong type in a metric's or stage's block: refused here
    cfg = replace(cfg, angles=canonical_angles(cfg.angles, ontology))
    with writer_lock(cfg.out), sigterm_interrupts():
        try:
            return _run_locked(cfg, ontology, progress, warm)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM: the run says it was stopped
            mark_interrupted(cfg.out / "run.json", exc)
            raise
        except Exception as exc:  # the run says it failed, and with what; its rows stay for a rerun
            said = mark_failed(cfg.out / "run.json", exc)
            if isinstance(exc, OSError):
                raise RunIOError(exc, said) from exc
            raise


@contextmanager
def writer_lock(out: Path) -> Iterator[None]:
    """The run folder's one writer (`vistar score`, or a `vistar.Scorer` appending to it), created if need be;
    `RunLocked` naming the holder's pid when another has it."""
    out.mkdir(parents=True, exist_ok=True)
    lock = open(out / ".lock", "a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "?"
        lock.close()
        raise RunLocked(f"{out}: another `vistar score` (pid {holder}) is writing to this run directory") from None
    try:
        lock.truncate(0)
        lock.write(str(os.getpid()))
        lock.flush()
        yield
    finally:
        lock.close()  # closing releases the lock; a killed process releases it too


def canonical_angles(angles: list[str] | None, ontology: Ontology, option: str = "--angles") -> list[str] | None:
    """The requested angle codes in the ontology's spelling, whatever their case (`tr` is TR)."""
    if not angles:
        return angles
    by_fold = {code.casefold(): code for code in ontology.angles}
    unknown = [a for a in angles if a.casefold() not in by_fold]
    if unknown:
        raise ValueError(f"{option}: unknown angle code(s) {', '.join(unknown)} (known: {', '.join(ontology.angles)})")
    return list(dict.fromkeys(by_fold[a.casefold()] for a in angles))


def _run_locked(cfg: ScoreConfig, ontology: Ontology, progress: Progress, warm: StageContext | None) -> RunSummary:
    if cfg.executor == "local":
        from .executors.local import may_use_pool, start_forkserver

        if may_use_pool(cfg, warm is not None):
            start_forkserver()  # the pool workers' server imports the engine while this process plans
    summary = RunSummary()
    clear_loaded()
    previous = previous_meta(cfg.out)
    _check_same_shard(cfg, previous)
    check_same_max_pixels(cfg.out, previous, cfg.max_pixels)
    prompts, invalid = load_prompts(cfg.prompts, ontology, summary)
    mapping = discover(cfg.images, set(prompts) | set(invalid), cfg.manifest, cfg.out)
    summary.problems += [{"kind": "unmatched_image", "item": i, "message": why} for i, why in mapping.unmatched_images.items()]
    summary.problems += [{"kind": "duplicate_sample", "item": i, "message": why} for i, why in mapping.duplicates.items()]
    wanted = {p for p, prompt in prompts.items() if not cfg.angles or prompt.angle in cfg.angles}
    summary.problems += [{"kind": "prompt_without_image", "item": p, "message": "no image for this prompt"}
                         for p in mapping.prompts_without_images if p in wanted]
    summary.problems += _models_missing_images(mapping, wanted)
    summary.scope = {"prompts": len(prompts), "invalid_prompts": len(invalid), "wanted_prompts": len(wanted),
                     "angles": dict(sorted(Counter(p.angle for p in prompts.values()).items())),
                     "matched_images": sum(rec.prompt_id in wanted for rec in mapping.records),
                     "unmatched_images": len(mapping.unmatched_images)}
    # every shard reports the problems of the whole folder and prompt file (`vistar merge` keeps each once)
    records = shards.select(cfg.shard, mapping.records)

    store = ResultStore(cfg.out)
    earlier = previous_models(previous)   # recorded from the start: a run that fails or is stopped keeps them
    meta = {**_run_meta(cfg, ontology, previous), "work_digest": shards.folder_digest(mapping.records), "models": earlier}
    write_json_atomic(cfg.out / "run.json", {**meta, "status": "running"})
    scorers: dict[str, Scorer] = {}
    jobs, rows, stale = plan_run(cfg, ontology, prompts, invalid, records, store.existing(), scorers, summary)
    meta["metric_versions"] = {n: s.metric.version for n, s in sorted(scorers.items()) if s.metric}
    meta["stage_versions"] = stage_versions(scorers)
    _write_problems(cfg.out, summary.problems)
    store.forget(stale)  # rows about to be replaced go first, so the dataset never holds two rows for one (image, metric)
    store.write(rows)
    summary.count(rows)

    prepare_process(cfg.device)  # before any stage initialises CUDA
    ctx = warm if warm is not None else StageContext(
        device=cfg.device, model_paths=cfg.model_paths, features=ontology.data.get("features") or {}, options=cfg.options,
        judge_ledger=cfg.judge_ledger)
    groups = group_by_image(jobs)
    done = 0
    if progress:
        progress(0, len(groups))
    n_batches = -(-len(groups) // max(1, cfg.batch_size))
    with open_executor(cfg, ctx, ontology, n_batches, warm=warm is not None) as executor:
        for batch, batch_rows in executor.score(in_batches(groups, cfg.batch_size)):
            check_same_weights(cfg.out, earlier, loaded_models())   # before a row of another weight lands
            if (models := {**earlier, **loaded_models()}) != meta["models"]:   # a resume's rows were scored with both;
                meta["models"] = models        # named before a row scored with a new one lands, so a killed run keeps it
                write_json_atomic(cfg.out / "run.json", {**meta, "status": "running"})
            store.write(batch_rows)
            summary.count(batch_rows)
            done += len(batch)
            if progress:
                progress(done, len(groups))
    meta["executor"] = {"name": executor.name, "workers": executor.workers,
                        "stage_seconds": {k: round(v, 3) for k, v in sorted(executor.stage_seconds.items())},
                        **({"startup_seconds": {k: round(v, 3) for k, v in executor.startup.items()}} if executor.startup else {})}
    store.compact()
    meta["stage_devices"] = stage_devices(meta["stage_versions"], ctx)
    meta["stage_precisions"] = stage_precisions(map(registry.feature_stage, meta["stage_versions"]), ctx)
    meta["counts"] = {"rows_written": summary.scored, "rows_reused": summary.reused,
                      **({"rows_kept": summary.kept} if summary.kept else {}), **summary.rows_by_status}
    ending: dict[str, Any] = {"status": "complete"}
    if summary.scored == 0 and summary.reused == 0:  # exit 4: no scheduler may read this folder as done
        summary.nothing_scored = nothing_reason(summary, cfg)
        ending = {"status": "nothing_scored", "nothing_scored": summary.nothing_scored}
    write_json_atomic(cfg.out / "run.json", {**meta, **ending, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    return summary


def previous_meta(out: Path) -> dict[str, Any] | None:
    """The run.json an earlier run left in `out` (None when there is none, or it is unreadable)."""
    try:
        old = json.loads((out / "run.json").read_text())
    except (OSError, ValueError):
        return None
    return old if isinstance(old, dict) else None


def previous_models(previous: dict[str, Any] | None) -> dict[str, Any]:
    """The weights earlier invocations into this folder loaded: their rows are still there, so run.json (and the
    weight check of `vistar merge`) must keep naming them after a resume that loads nothing or fewer."""
    models = (previous or {}).get("models")
    return dict(models) if isinstance(models, dict) else {}


def _check_same_shard(cfg: ScoreConfig, previous: dict[str, Any] | None) -> None:
    """A run folder holds one shard's rows (or all): resuming it as another would mix them."""
    if previous is None:
        return
    before, now = previous.get("shard"), cfg.shard.record if cfg.shard else None
    if before != now:
        raise ValueError(f"{cfg.out} was scored with {_shard_text(before)}; this run has {_shard_text(now)}. "
                         "Use another --out for another shard")


def check_same_max_pixels(out: Path, previous: dict[str, Any] | None, max_pixels: int, option: str = "--max-pixels",
                          folder: str = "--out") -> None:
    """--max-pixels decides the scale a large JPEG is decoded at, so it changes scores, yet it is not in the row
    key: resuming with another value would mix rows of two decodings under one run.json. OPTION and FOLDER name
    the caller's settings (`vistar.Scorer` says `max_pixels` and `run_dir`)."""
    before = recorded_max_pixels(previous)
    if before is not None and before != max_pixels:
        raise ValueError(f"{out} was scored with {option} {before}; this run has {option} {max_pixels}. "
                         f"Resume it with the same value, or use another {folder}")


def recorded_max_pixels(previous: dict[str, Any] | None) -> int | None:
    """The max_pixels a folder's rows were decoded under. A Scorer folder written before run.json recorded it was
    decoded under DEFAULT_MAX_PIXELS (the Scorer had no other value then); a `vistar score` folder always recorded
    its --max-pixels, but for one of the first version, which did not: its value is unknown, so any is accepted."""
    recorded = (previous or {}).get("max_pixels")
    if recorded is None and (previous or {}).get("command") == SCORER_COMMAND:
        return DEFAULT_MAX_PIXELS
    return recorded


def check_same_weights(out: Path, before: dict[str, Any], loaded: dict[str, Any], folder: str = "--out") -> None:
    """A weight's sha256 is not in the row key (run.json records it): a weight swapped under the same name since the
    folder's rows were scored would put rows of two weights in one run, which `vistar merge` refuses across runs.
    Checked when the weight is loaded, before a row scored with it is written."""
    for name, entry in loaded.items():
        old, new = (before.get(name) or {}).get("sha256"), entry.get("sha256")
        if old and new and old != new:
            raise ValueError(f"{out} holds rows scored with weight '{name}' of sha256 {old}; this run loaded it with sha256 "
                             f"{new} ({entry.get('path')}). Put the earlier weight back (--model-path {name}=PATH), or "
                             f"use another {folder} to score every row with this one")


def _shard_text(record: dict[str, int] | None) -> str:
    return f"--shard {shards.label(record)}" if record else "no --shard"


def _models_missing_images(mapping: Mapping, wanted: set[str]) -> list[Problem]:
    """A model without an image for prompts other models answered: a generation that stopped half-way, or an
    empty folder. Its means cover other prompts than its rivals', so it is said, once per model."""
    has: dict[str, set[str]] = {model: set() for model in mapping.models}
    for rec in mapping.records:
        if rec.prompt_id in wanted:
            has[rec.model].add(rec.prompt_id)
    covered = set().union(*has.values())
    problems = []
    for model, mine in has.items():
        missing = sorted(covered - mine)
        if missing:
            shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
            empty = " (an empty folder, or no file matches a prompt)" if not mine else ""
            problems.append({"kind": "model_missing_images", "item": model, "message": f"no image for {len(missing)} of "
                             f"the {len(covered)} prompts some model has an image for{empty}: {shown}"})
    return problems


def group_by_image(jobs: list[Job]) -> list[list[Job]]:
    """Jobs of one (image, prompt) together: the image is decoded and its features computed once for all its metrics."""
    groups: dict[ImageRecord, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.record, []).append(job)
    return list(groups.values())


def in_batches(items: list[T], size: int) -> Iterable[list[T]]:
    size = max(1, size)
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _run_meta(cfg: ScoreConfig, ontology: Ontology, old: dict[str, Any] | None) -> dict[str, Any]:
    previous = [] if old is None else (
        old.get("history", []) + [{k: old.get(k) for k in ("command", "started", "finished", "status")}])
    prompts_sha = file_sha256(cfg.prompts) if Path(cfg.prompts).is_file() else None
    return {"command": cfg.command or " ".join(sys.argv), "images": str(Path(cfg.images).resolve()),
            "prompts": str(Path(cfg.prompts).resolve()), "prompts_sha256": prompts_sha,
            "manifest": str(Path(cfg.manifest).resolve()) if cfg.manifest else None,
            "manifest_sha256": file_sha256(cfg.manifest) if cfg.manifest else None,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "versions": versions(), "hardware": hardware(),
            "ontology_hash": ontology.hash, "device": cfg.device,
            "device_requested": cfg.device_requested or cfg.device, "batch_size": cfg.batch_size, "workers": cfg.workers,
            "prefetch": cfg.prefetch,
            "angles": cfg.angles, "max_pixels": cfg.max_pixels, "retry_errors": cfg.retry_errors, "history": previous,
            "shard": cfg.shard.record if cfg.shard else None, **cfg.recorded}


def _write_problems(out: Path, problems: list[Problem]) -> None:
    """One JSON object per line; the raw text is kept, with every character the CLI would escape (`textsafe`)
    `\\u`-escaped (json escapes only those below 0x20), so `cat problems.jsonl` cannot drive the terminal."""
    lines = (escape_unsafe(json.dumps(p, ensure_ascii=False), json_escape) for p in problems)
    write_text_atomic(out / "problems.jsonl", "".join(line + "\n" for line in lines))
