"""Planning a run: which (image, metric) rows are already in the store, which must be scored, and which are
known without scoring (invalid prompt, unreadable file, unavailable metric). Keys are built here (docs/engine.md)."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from ..api import Metric
from ..ontology import Ontology
from ..prompts_dsl import Prompt, PromptFile, read_prompts, validate_prompt
from ..prompts_dsl.validate import as_issue, with_ontology_codes
from ..runtime import precision
from . import registry
from .hashes import hash_files
from .images import ImageRecord
from .params import metric_params, stage_params
from .store import Identity

Row = dict[str, Any]        # one result row in the store's schema (`row`)
Problem = dict[str, str]    # one line of problems.jsonl: kind, item, message
Invalid = tuple[Prompt | None, str, str]   # an unusable prompt (if it parsed), why (located), why (unlocated)
Hasher = Callable[[list[Path]], dict[Path, str | OSError]]  # each path's sha256, or the OSError reading it


class PlanOptions(Protocol):
    """What planning reads of the run's configuration (runner.ScoreConfig)."""

    @property
    def angles(self) -> list[str] | None: ...
    @property
    def out(self) -> Path: ...
    @property
    def verify(self) -> bool: ...
    @property
    def retry_errors(self) -> bool: ...
    @property
    def model_paths(self) -> dict[str, str] | None: ...
    @property
    def device(self) -> str: ...


@dataclass
class Job:
    """One (image, metric) to score."""

    record: ImageRecord
    sha256: str
    prompt: Prompt
    metric: Metric
    params: Any                  # the metric's parameter dataclass instance (Metric.params), None if it has none
    key: str


Batch = list[list[Job]]   # a batch of images: per image, its jobs


@dataclass
class RunSummary:
    scored: int = 0
    reused: int = 0
    kept: int = 0      # of `reused`: ok rows kept although their metric or a weight cannot run here (plan_run)
    rows_by_status: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    scope: dict[str, Any] = field(default_factory=dict)  # prompts, angles and matched images: why a run had nothing to score
    nothing_scored: str | None = None          # why nothing was scored or reused (run.json `nothing_scored`)

    def count(self, rows: list[Row]) -> None:
        for r in rows:
            self.rows_by_status[r["status"]] = self.rows_by_status.get(r["status"], 0) + 1
        self.scored += len(rows)


@dataclass
class Scorer:
    """A metric resolved for this run, or why it cannot run (its module or a stage failed to import)."""

    name: str
    metric: Metric | None
    signature: str = ""          # metric version + params + versions/params of every stage it depends on
    unavailable: str | None = None
    params: Any = None           # the metric's parameters (its parameter dataclass), parsed once per run
    absent: list[str] = field(default_factory=list)   # catalogued weights of its stages absent on this machine
    complete: str = ""           # the signature as it would be with every weight present


def _hash(*parts: object) -> str:
    # surrogatepass: a prompt file whose name is not UTF-8 is named in some messages that are hashed
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _params_hash(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:12]


def load_prompts(path: str | Path, ontology: Ontology,
                 summary: RunSummary) -> tuple[dict[str, Prompt], dict[str, Invalid]]:
    """`sort_prompts` of a prompt file. The error rows of an invalid prompt store the located reason but hash the
    other one into their key, so naming the prompt file another way (`p.vistar` or its absolute path) or moving
    the line does not re-score them."""
    located = re.compile(re.escape(str(Path(path))) + r"(?::\d+)+")   # as read_prompts names its lines
    return sort_prompts(read_prompts(path), ontology, summary, lambda message: located.sub("<prompts>", message))


def sort_prompts(parsed: PromptFile, ontology: Ontology, summary: RunSummary,
                 unlocated: Callable[[str], str]) -> tuple[dict[str, Prompt], dict[str, Invalid]]:
    """Valid prompts by id, and invalid ids -> (the prompt if it parsed, why it cannot be used, the same reason
    without its location: `unlocated`), whether they came from a file or from Python (`vistar.Scorer`)."""
    for exc in parsed.errors:
        issue = as_issue(exc)
        summary.problems.append({"kind": "prompt_error", "item": issue.location, "message": str(issue)})
    invalid: dict[str, Invalid] = {}
    for pid, exc in parsed.failed_ids.items():
        issue = as_issue(exc)
        invalid[pid] = (None, f"{issue.location}: {issue.message}", unlocated(issue.message))
    prompts: dict[str, Prompt] = {}
    for prompt in (with_ontology_codes(q, ontology) for q in parsed.prompts):  # `[gd|tr]` is [GD|TR]
        assert prompt.id is not None   # read_prompts gives every prompt of a file its id
        issues = validate_prompt(prompt, ontology)
        for issue in issues:
            summary.problems.append({"kind": f"prompt_{issue.severity}", "item": prompt.id, "message": str(issue)})
        errors = "; ".join(f"field '{i.field}': {i.message}" for i in issues if i.severity == "error")
        if prompt.id in invalid:  # a duplicate id: which prompt the images answer is ambiguous
            invalid[prompt.id] = (prompt, *invalid[prompt.id][1:])
        elif errors:
            invalid[prompt.id] = (prompt, f"{prompt.source}: {errors}", unlocated(errors))
        else:
            prompts[prompt.id] = prompt
    return prompts, invalid


def _absent(model: str, model_paths: dict[str, str] | None) -> bool:
    """MODEL is a catalogue weight that does not resolve on this machine (models outside the catalogue, such as
    the OCR's bundled files, are never absent here)."""
    from ..models import MissingWeightError, resolve_weight
    from ..models.catalog import catalog

    if model not in catalog():
        return False
    try:
        resolve_weight(model, model_paths)
    except MissingWeightError:
        return True
    return False


def resolve_scorer(name: str, ontology: Ontology, model_paths: dict[str, str] | None = None,
                   device: str = "cpu") -> Scorer:
    """Import the metric and its stages now, so a missing dependency becomes `skipped` rows, not a crash mid-run;
    its parameters are parsed once here (a bad block raises OntologyError: the run stops, no row fails for it).

    The signature hashes each stage's parameters as they take effect on DEVICE (its precision:
    runtime/precision.py; what the stage's own `key_params` resolves, e.g. OCR's provider), and names the catalogued
    weights of its stages that are absent: a row scored without an optional weight (CPA without the person
    detector) is scored again once the weight is fetched, not reused."""
    try:
        metric = registry.metric(name)
        stages = [registry.feature_stage(s) for s in registry.stage_order(set(metric.all_features))]
    except Exception as exc:  # a missing optional dependency must not end the run
        why = str(exc) if isinstance(exc, registry.ModuleUnavailable) else f"{type(exc).__name__}: {exc}"
        return Scorer(name, None, unavailable=f"metric {name} unavailable: {why}")
    parts = [metric.name, metric.version, _params_hash(ontology.metric_params(name))]
    features = ontology.data.get("features") or {}
    for stage in stages:
        stage_params(ontology, stage)
        hashed = precision.key_params(stage.name, dict(features.get(stage.name) or {}), device)
        hashed = stage.key_params(hashed, device) if stage.key_params else hashed
        parts.append(f"{stage.name}:{stage.version}:{_params_hash(hashed)}")
    absent = sorted({m for stage in stages for m in stage.models if _absent(m, model_paths)})
    complete = "|".join(parts)
    signature = "|".join([*parts, f"absent:{','.join(absent)}"]) if absent else complete
    return Scorer(name, metric, signature, params=metric_params(ontology, metric), absent=absent, complete=complete)


def plan_run(cfg: PlanOptions, ontology: Ontology, prompts: dict[str, Prompt], invalid: dict[str, Invalid],
             records: list[ImageRecord], existing: dict[Identity, tuple[str, str, str]], scorers: dict[str, Scorer],
             summary: RunSummary, hashes: Hasher | None = None) -> tuple[list[Job], list[Row], set[str]]:
    """Jobs still to score, rows known without scoring (errors, unavailable metrics), and stale keys to forget.
    `hashes(paths)`: each record's sha256 or the OSError reading it (default: the files', cached in the run folder).

    A row is reused when the visible row for its (image, model, prompt_id, sample, metric) has the same key
    and status ok (or error, unless --retry-errors); any other visible row for it is stale, and so is a row of a
    metric the image's prompt no longer has (its angle or protocol was edited), and a row of another file for the
    same (model, prompt_id, sample) (renamed, or not the one `images.one_file_per_sample` keeps): one sample, one row.

    What cannot run on this machine never replaces an `ok` row computed with it: an ok row of an unavailable metric
    is kept while its image bytes are unchanged (for a protocol that does not import: a row of a metric nothing else
    routes), and an ok row scored with a weight now absent is kept while its key
    matches the key with every weight present (`keep_ok`); a problem line per metric says how many were kept."""
    jobs: list[Job] = []
    rows: list[Row] = []
    stale: set[str] = set()
    by_image: dict[tuple[str, str, str, int], list[tuple[str, str]]] = {}  # (image, model, prompt_id, sample) -> [(metric, key)]
    by_sample: dict[tuple[str, str, int], list[tuple[str, str]]] = {}  # (model, prompt_id, sample) -> [(image, key)]
    for (image, model, pid, sample, metric), (key, *_) in existing.items():
        by_image.setdefault((image, model, pid, sample), []).append((metric, key))
        by_sample.setdefault((model, pid, sample), []).append((image, key))
    todo: list[tuple[ImageRecord, Prompt, str | None, str | None]] = []  # (record, prompt, why it is invalid or None, the same without file and line)
    for rec in records:
        maybe, why, why_key = (prompts[rec.prompt_id], None, None) if rec.prompt_id in prompts else invalid[rec.prompt_id]
        if maybe is None:
            summary.problems.append({"kind": "image_of_invalid_prompt", "item": rec.rel,
                                     "message": f"prompt '{rec.prompt_id}' could not be read: {why}"})
        elif not cfg.angles or maybe.angle in cfg.angles:
            todo.append((rec, maybe, why, why_key))
    shas = (hashes or (lambda paths: hash_files(paths, cfg.out, verify=cfg.verify)))([rec.path for rec, *_ in todo])

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

    kept: dict[str, tuple[int, str]] = {}   # metric -> (ok rows kept, why it cannot run here)

    def keep_ok(rec: ImageRecord, name: str, sha: str, key: str | None, why: str) -> bool:
        """True when the visible row is an ok row of the same image bytes (and KEY, if given) that this machine
        cannot reproduce: it is kept, as reused, rather than replaced by a skipped or lower-evidence row."""
        seen = existing.get((rec.rel, rec.model, rec.prompt_id, rec.sample, name))
        if seen is None or seen[1] != "ok" or seen[2] != sha or (key is not None and seen[0] != key):
            return False
        summary.reused += 1
        summary.kept += 1
        kept[name] = (kept.get(name, (0, ""))[0] + 1, why)
        return True

    def routed() -> set[str]:
        """Every metric name this machine can route (registered metrics, those of protocols that import, and the
        one row named like a protocol that does not): a lost protocol's own metrics are none of them."""
        return {name for names in registry.check().values() for name in names}

    def scorer_of(name: str) -> Scorer:
        if name not in scorers:
            scorers[name] = resolve_scorer(name, ontology, cfg.model_paths, cfg.device)
            if (why_not := scorers[name].unavailable) is not None:
                summary.problems.append({"kind": "metric_unavailable", "item": name, "message": why_not})
        return scorers[name]

    for rec, prompt, why, why_key in todo:
        names = metric_names(prompt)
        sha = shas[rec.path]
        # a protocol that does not import here cannot name its metrics: the ok rows it scored earlier are kept,
        # and only those: a row of a metric routed here by anything else (TR of the prompt's earlier text) is not its
        lost = scorer_of(names[0]).unavailable if why is None and names[0] in registry.PROTOCOLS else None
        for metric, key in by_image.get((rec.rel, rec.model, rec.prompt_id, rec.sample), ()):
            if metric not in names and not (lost and metric not in routed() and isinstance(sha, str)
                                            and keep_ok(rec, metric, sha, None, lost)):
                stale.add(key)
        stale.update(key for image, key in by_sample.get((rec.model, rec.prompt_id, rec.sample), ()) if image != rec.rel)
        if isinstance(sha, OSError):
            for name in names:
                key = _hash(rec.rel, "unreadable", prompt.fingerprint, name)
                if not settle(rec, name, key):
                    rows.append(row(rec, "", prompt, name, None, None, "error", f"cannot read file: {sha}", {}, key))
            continue
        for name in names:
            if why is not None:
                key = _hash(rec.rel, sha, prompt.fingerprint, name, "invalid-prompt", why_key)
                if not settle(rec, name, key):
                    rows.append(row(rec, sha, prompt, name, None, None, "error", f"invalid prompt '{prompt.id}': {why}", {}, key))
                continue
            scorer = scorer_of(name)
            if scorer.metric is None:
                if keep_ok(rec, name, sha, None, scorer.unavailable or ""):
                    continue
                key = _hash(rec.rel, sha, prompt.fingerprint, name, "unavailable")
                if not settle(rec, name, key):
                    rows.append(row(rec, sha, prompt, name, None, None, "skipped", scorer.unavailable, {}, key))
                continue
            if scorer.absent and keep_ok(rec, name, sha, _hash(rec.rel, sha, prompt.fingerprint, scorer.complete),
                                         f"weight(s) {', '.join(scorer.absent)} absent on this machine"):
                continue
            key = _hash(rec.rel, sha, prompt.fingerprint, scorer.signature)
            if not settle(rec, name, key):
                jobs.append(Job(rec, sha, prompt, scorer.metric, scorer.params, key))
    summary.problems += [{"kind": "ok_rows_kept", "item": name, "message": f"{n} ok row(s) scored earlier kept as they "
                          f"are ({why}); they are checked again when it can run"} for name, (n, why) in sorted(kept.items())]
    return jobs, rows, stale


def metric_names(prompt: Prompt) -> list[str]:
    """The metrics that score this prompt (a `protocol=` control can route it to a sibling protocol's metrics, or
    to the protocol's own name when its module does not import here); the angle code itself when none is
    registered, so the image still gets a (skipped) row saying so."""
    return registry.metrics_for_prompt(prompt) or [prompt.angle]


def stage_versions(scorers: dict[str, Scorer]) -> dict[str, str]:
    """Versions of every stage the run's metrics use (for run.json)."""
    out: dict[str, str] = {}
    for scorer in scorers.values():
        if scorer.metric is not None:
            for name in registry.stage_order(set(scorer.metric.all_features)):
                out[name] = registry.feature_stage(name).version
    return dict(sorted(out.items()))


def row(rec: ImageRecord, sha: str, prompt: Prompt, metric_name: str, metric_version: str | None, score: float | None,
        status: str, error: str | None, details: dict[str, Any], key: str) -> Row:
    """One result row in the store's schema (`shard` is added by the store)."""
    return {"image": rec.rel, "image_sha256": sha, "model": rec.model, "prompt_id": rec.prompt_id, "sample": rec.sample,
            "role": prompt.role, "angle": prompt.angle, "metric": metric_name, "score": score, "status": status,
            "error": error, "details": details, "set": prompt.set, "metric_version": metric_version, "key": key}
