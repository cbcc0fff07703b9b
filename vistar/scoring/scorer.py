"""`vistar.Scorer`: the engine of `vistar score` called from Python on images in memory (docs/api.md).

Nothing here scores: the prompts are sorted by `engine.plan.sort_prompts`, the work is planned by
`engine.plan.plan_run` (keys, reused rows, error rows of invalid prompts and unavailable metrics), batched by the
runner's `group_by_image`/`in_batches` and scored by the local executor (`score_batch`: the stages, then the pure
metrics), so every row is the row `vistar score` writes for the same image. What is new is where images come from
(`sources.py`), how prompts are given (`prompts.py`), and that the stage context, hence every loaded model, lives
as long as the Scorer. Accumulated rows are summarised by the report's own tables (`report.tables`).
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..api import RunOptions, StageContext
from ..engine import registry
from ..engine.executors.local import InProcess
from ..engine.hashes import hash_files
from ..engine.images import DEFAULT_MAX_PIXELS, ImageRecord
from ..engine.params import check_params
from ..engine.plan import Hasher, RunSummary, Scorer as ResolvedMetric, metric_names, plan_run, sort_prompts, stage_versions
from ..engine.runmeta import hardware, versions, write_json_atomic
from ..engine.runner import (
    SCORER_COMMAND,
    ScoreConfig,
    canonical_angles,
    check_same_max_pixels,
    check_same_weights,
    group_by_image,
    in_batches,
    previous_meta,
    previous_models,
    writer_lock,
)
from ..engine.store import IDENTITY, ResultStore, read_visible
from ..models.provenance import loaded_models, own_loads
from ..ontology import Ontology
from ..prompts_dsl import Prompt
from ..runtime.device import prepare_process, resolve_device, stage_devices
from ..runtime.precision import stage_precisions
from .prompts import LOCATION, prompt_per_image
from .results import Result, Results, rows_frame
from .sources import MemoryImage, Source, decode_source, image_sources

if TYPE_CHECKING:
    from ..report.tables import ReportData

DEFAULT_MODEL = "default"      # the model of an image given in memory when `model=` is not given
COMMAND = SCORER_COMMAND       # run.json's `command` for a run folder the Scorer created
COMPACT_AFTER = 64             # small shards a run folder may hold before score() merges them (each call reads them all)
_JUDGE_KEYS = ("url", "model", "key_env", "mode", "config", "cache_only", "hwpq_dir")
_SAMPLE = re.compile(r"^(?P<pid>.+?)_(?P<k>\d+)$")


class Scorer:
    """Scores images against prompts with the engine of `vistar score`; models load on first use and stay loaded.

    `angles`: the angle codes to score (None: every angle; a prompt of another angle gives no result);
    `device`: cpu, cuda, cuda:N or auto; `ontology`/`weights`: a YAML file merged over the shipped ontology, or an
    `Ontology`; `model_paths`: catalogue name -> weight path, as `--model-path`; `judge`: the judge settings of the
    HWPQ angles (`url`, `model`, `key_env`, `mode`, `config`, `cache_only`, `hwpq_dir`); `run_dir`: a run folder the
    rows are appended to, readable by `vistar report` and `vistar calibrate` (refused when it was scored with another
    `max_pixels`); `batch_size`: images per stage call; `max_pixels`: the largest decoded image, as `--max-pixels`.
    """

    def __init__(self, angles: str | Sequence[str] | None = None, device: str = "cpu",
                 ontology: str | os.PathLike[str] | Ontology | None = None, weights: str | os.PathLike[str] | None = None,
                 model_paths: Mapping[str, str | os.PathLike[str]] | None = None, judge: Mapping[str, Any] | None = None,
                 run_dir: str | os.PathLike[str] | None = None, batch_size: int = 8,
                 max_pixels: int = DEFAULT_MAX_PIXELS) -> None:
        self.ontology = _ontology(ontology, weights)
        self.angles: list[str] | None = canonical_angles(_angle_list(angles), self.ontology, option="angles")
        self.device: str = _device(device)
        self.run_dir = None if run_dir is None else _path(run_dir, "run_dir")
        paths = _model_paths(model_paths)
        self._cfg = ScoreConfig(images=Path(), prompts=Path(), out=self.run_dir or Path(), angles=self.angles,
                                device=self.device, batch_size=_at_least_1(batch_size, "batch_size"), prefetch=2,
                                cpu_workers=1, max_pixels=_at_least_1(max_pixels, "max_pixels"), command=COMMAND,
                                model_paths=paths)
        self._check_max_pixels()   # refused now rather than at the first call (which checks again: see score)
        options, ledger = _judge(judge)
        self.context = StageContext(device=self.device, model_paths=paths,
                                    features=self.ontology.data.get("features") or {}, options=options, judge_ledger=ledger)
        self._metrics: dict[str, ResolvedMetric] = {}   # resolved once, kept with the models
        self._next_sample: dict[tuple[str, str], int] = {}
        self._files: dict[tuple[str, str, int], Path] = {}   # (model, prompt id, sample) -> the file given it
        self._rows: list[dict[str, Any]] = []
        self._image_roots: list[str] = []
        self._loaded: dict[str, dict[str, Any]] = {}   # the weights this Scorer's calls loaded (its models stay loaded)
        prepare_process(self.device)

    def __repr__(self) -> str:
        return f"Scorer(angles={self.angles}, device={self.device!r}, run_dir={self.run_dir})"

    # --- scoring ------------------------------------------------------------------------
    def score(self, images: object, prompts: object, model: str | None = None) -> Results:
        """One result per (image, metric of its prompt's angle), as `vistar score` scores the same image.

        `images`: a path, a PIL image, a uint8 (HxW, HxWx3, HxWx4) or float [0, 1] numpy array, a CHW/NCHW uint8 or
        float [0, 1] torch tensor, or a list of them. `prompts`: a DSL line (`ID: [ROLE|ANGLE] core {...}`, the id
        optional), a `Prompt` or a dict (`id`, `prompt`, other fields metadata): one for all images, or a list with
        one per image. `model`: the model name of the rows (default: a path's folder, else `default`)."""
        sources = image_sources(images)
        per_image, prompt_file = prompt_per_image(prompts, len(sources))
        model = _model_name(model)
        summary = RunSummary()
        valid, invalid = sort_prompts(prompt_file, self.ontology, summary, lambda message: LOCATION.sub("<prompts>", message))
        with self._store() as store, own_loads():
            self._check_max_pixels()   # a `vistar score` may have written the folder since the last call
            weights = previous_models(previous_meta(store.run_dir)) if store is not None else {}
            existing = store.existing() if store is not None else {}
            records = self._records(sources, per_image, model, existing)
            jobs, rows, stale = plan_run(self._cfg, self.ontology, valid, invalid, records, existing, self._metrics, summary,
                                         hashes=cast(Hasher, self._hashes))   # records carry a Source where files carry a Path
            if store is not None:
                store.forget(stale)
                store.write(rows)
            with InProcess(self._cfg, self.context, self.ontology, decode=decode_source) as executor:
                for _, batch_rows in executor.score(in_batches(group_by_image(jobs), self._cfg.batch_size)):
                    if store is not None:
                        check_same_weights(store.run_dir, weights, self._loaded_models(), "run_dir")
                        self._record_run(records, None)   # the weights named before a row scored with them lands
                        store.write(batch_rows)
                    rows += batch_rows
            if summary.reused:   # rows of the run folder that are still right for these images
                rows += self._reused(records, rows)
            if store is not None:
                store.compact(more_than=COMPACT_AFTER)   # else call N would open N files, twice
                self._record_run(records, summary)
        sorted_prompts = {**{pid: p for pid, (p, *_) in invalid.items() if p is not None}, **valid}   # codes as the ontology spells them
        return _results(records, [sorted_prompts[str(p.id)] for p in per_image], rows, summary.problems)

    def update(self, images: object, prompts: object, model: str | None = None) -> None:
        """`score`, keeping the rows for `compute` (torchmetrics' update)."""
        self._rows += self.score(images, prompts, model).rows()

    def compute(self, seed: int = 0, resamples: int = 1000) -> "ReportData":
        """The report's numbers over the rows accumulated since `reset` (one per image and metric: the last, as in a
        run folder, when a file was updated again): per-model, per-angle means with 95% CIs
        (`angle_scores`), the role-weighted overall and ranking (`overall`), role scores (`role_scores`) and the
        notes, by the rules of `vistar report` (docs/report.md), on 0-100."""
        from ..report.tables import build_report_data

        if not self._rows:
            raise ValueError("compute(): nothing accumulated; call update() first")
        latest = {tuple(row[c] for c in IDENTITY): row for row in self._rows}   # a file updated again: its last row
        data: ReportData = build_report_data(rows_frame(list(latest.values())), self.ontology, seed=seed, resamples=resamples)
        return data

    def reset(self) -> None:
        """Forget the accumulated rows (the models stay loaded; rows written to `run_dir` stay there)."""
        self._rows = []
        if self.run_dir is None:
            self._next_sample.clear()
            self._files.clear()

    def close(self) -> None:
        """Merge the run folder's per-call shards into few files (what `vistar score` does at the end of a run)."""
        if self.run_dir is not None and (self.run_dir / "scores.parquet").exists():
            with writer_lock(self.run_dir):
                ResultStore(self.run_dir).compact()

    def __enter__(self) -> "Scorer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the engine's inputs --------------------------------------------------------------
    def _records(self, sources: list[Source], prompts: list[Prompt], model: str | None,
                 existing: Mapping[tuple[Any, ...], Any]) -> list[ImageRecord]:
        """One record per image; a sample number that names the image uniquely within (model, prompt id): from a
        file named `<prompt id>[_<k>]` as `vistar score` reads it (unless this call, or an earlier call of this
        Scorer, already gave that sample to another image: the same `<model>/<name>` under another root), else
        the next one free in this Scorer and its run folder. So how images are split across calls does not change
        how many samples they are."""
        highest: dict[tuple[str, str], int] = {}
        for _, m, pid, sample, _ in existing:
            highest[(m, pid)] = max(highest.get((m, pid), -1), sample)
        records: list[ImageRecord] = []
        taken: set[tuple[str, str, int]] = set()
        for source, prompt in zip(sources, prompts):
            pid = str(prompt.id)
            if isinstance(source, MemoryImage):
                rel, owner, sample = source.image, model or DEFAULT_MODEL, None
            else:
                rel, owner, sample = f"{source.parent.name}/{source.name}", model or source.parent.name, _named_sample(source, pid)
            free = max(self._next_sample.get((owner, pid), 0), highest.get((owner, pid), -1) + 1)
            if sample is None or (owner, pid, sample) in taken or self._files.get((owner, pid, sample), source) != source:
                sample = free   # two files of one name under one model= name, in this call or an earlier one
            taken.add((owner, pid, sample))
            if isinstance(source, Path):
                self._files[(owner, pid, sample)] = source
            self._next_sample[(owner, pid)] = max(free, sample + 1)
            records.append(ImageRecord(source, rel, owner, pid, sample))  # type: ignore[arg-type]  # a path or pixels
            if isinstance(source, Path) and str(source.parent.parent) not in self._image_roots:
                self._image_roots.append(str(source.parent.parent))
        return records

    def _loaded_models(self) -> dict[str, dict[str, Any]]:
        """The weights this Scorer's rows were scored with: those its earlier calls loaded and this call's (inside
        `own_loads`), never another Scorer's in this process."""
        self._loaded.update(loaded_models())
        return dict(self._loaded)

    def _hashes(self, sources: list[Source]) -> dict[Source, str | OSError]:
        """sha256 of each file (through the run folder's hash cache, as `vistar score`), the pixel key of the rest."""
        files = [s for s in sources if isinstance(s, Path)]
        shas: dict[Path, str | OSError] = hash_files(files, self.run_dir) if files else {}
        return {s: s.sha256 if isinstance(s, MemoryImage) else shas[s] for s in sources}

    @contextmanager
    def _store(self) -> Iterator[ResultStore | None]:
        """The run folder's store under the writer lock of `vistar score`, or None without a run folder."""
        if self.run_dir is None:
            yield None
            return
        with writer_lock(self.run_dir):
            yield ResultStore(self.run_dir)

    def _check_max_pixels(self) -> None:
        """The run folder's rows were decoded under its max_pixels, which is not in their key: refuse another."""
        if self.run_dir is not None:
            check_same_max_pixels(self.run_dir, previous_meta(self.run_dir), self._cfg.max_pixels, "max_pixels", "run_dir")

    def _reused(self, records: list[ImageRecord], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The folder's rows for these images not scored in this call, as Arrow gives them (None for an empty field,
        as a fresh row has it; a pandas round trip would make it NaN)."""
        assert self.run_dir is not None
        wanted = {(r.rel, r.model, r.prompt_id, r.sample) for r in records}
        have = {(r["image"], r["model"], r["prompt_id"], r["sample"], r["metric"]) for r in rows}
        stored: list[dict[str, Any]] = read_visible(self.run_dir).to_pylist()
        return [r for r in stored if (r["image"], r["model"], r["prompt_id"], r["sample"]) in wanted
                and (r["image"], r["model"], r["prompt_id"], r["sample"], r["metric"]) not in have]

    def _record_run(self, records: list[ImageRecord], summary: RunSummary | None) -> None:
        """run.json: a folder this Scorer started gets the fields `vistar report` reads (status, device, where each
        stage ran, the models loaded); a folder `vistar score` wrote keeps its own, with this call in its history and
        the weights it loaded added to its models. `summary` None: mid-call, before a batch's rows land, when the
        call has loaded weights run.json does not name yet: they are named (status `running` in a folder this
        Scorer started, no history entry), so a call killed there leaves its rows' weights for the next resume's
        check, as `vistar score` does."""
        assert self.run_dir is not None
        path = self.run_dir / "run.json"
        previous = previous_meta(self.run_dir)
        models = {**previous_models(previous), **self._loaded_models()}   # earlier calls' and runs' rows stay
        if summary is None and previous and previous.get("models") == models:
            return
        now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        history = list(previous.get("history") or []) if previous else []
        if summary is not None:
            history.append({"command": f"{COMMAND}.score", "finished": now, "images": len(records),
                            "rows_written": summary.scored, "rows_reused": summary.reused})
        if previous and previous.get("command") != COMMAND:   # its weight check (runner.check_same_weights) needs ours
            write_json_atomic(path, {**previous, "models": models, "history": history})
            return
        stages = stage_versions(self._metrics)
        write_json_atomic(path, {
            "command": COMMAND, "images": self._image_roots, "started": previous.get("started", now) if previous else now,
            "finished": now if summary is not None else None, "status": "complete" if summary is not None else "running",
            "versions": versions(), "hardware": hardware(),
            "ontology_hash": self.ontology.hash, "device": self.device, "device_requested": self.device,
            "batch_size": self._cfg.batch_size, "angles": self.angles, "max_pixels": self._cfg.max_pixels,
            "models": models,
            "metric_versions": {n: s.metric.version for n, s in sorted(self._metrics.items()) if s.metric},
            "stage_versions": stages, "stage_devices": stage_devices(stages, self.context),
            "stage_precisions": stage_precisions(map(registry.feature_stage, stages), self.context),
            "history": history})


def _results(records: list[ImageRecord], prompts: list[Prompt], rows: list[dict[str, Any]],
             problems: list[dict[str, Any]]) -> Results:
    index = {(r.rel, r.model, r.prompt_id, r.sample): i for i, r in enumerate(records)}
    order = [metric_names(p) for p in prompts]

    def position(row: dict[str, Any]) -> tuple[int, int]:
        i = index[(row["image"], row["model"], row["prompt_id"], row["sample"])]
        return i, order[i].index(row["metric"]) if row["metric"] in order[i] else len(order[i])

    placed = sorted(((position(r), r) for r in rows), key=lambda pair: pair[0])
    return Results(tuple(Result.of_row(pos[0], r) for pos, r in placed), tuple(problems))


def _named_sample(path: Path, prompt_id: str) -> int | None:
    """The sample `vistar score` reads from a file named `<prompt id>.<ext>` (0) or `<prompt id>_<k>.<ext>` (k)."""
    if path.stem == prompt_id:
        return 0
    match = _SAMPLE.match(path.stem)
    return int(match["k"]) if match and match["pid"] == prompt_id else None


# --- argument checks: TypeError for a wrong type, ValueError for a wrong value, both naming the argument ----------
def _path(value: object, name: str) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), not {type(value).__name__}")
    return Path(os.fspath(value))


def _ontology(ontology: object, weights: object) -> Ontology:
    """The merged ontology, its metric and stage blocks parsed as `vistar score` parses them (OntologyError, a
    ValueError, naming the key and the file)."""
    overrides: list[str | Path] | None = None if weights is None else [_path(weights, "weights")]
    if isinstance(ontology, Ontology):
        if overrides:
            raise ValueError("weights: give the weights file with an ontology path, not with an Ontology object")
        loaded = ontology
    else:
        loaded = Ontology.load(None if ontology is None else _path(ontology, "ontology"), overrides=overrides)
    check_params(loaded)
    return loaded


def _at_least_1(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")
    return value


def _angle_list(angles: object) -> list[str] | None:
    if angles is None:
        return None
    if isinstance(angles, str):
        return [a.strip() for a in angles.split(",") if a.strip()]
    if not isinstance(angles, (list, tuple)) or not all(isinstance(a, str) for a in angles):
        raise TypeError(f"angles must be a list of angle codes such as ['TR', 'LI'], not {angles!r}")
    if not angles:
        raise ValueError("angles: an empty list scores nothing; give angle codes, or None for every angle")
    return list(angles)


def _device(device: object) -> str:
    if not isinstance(device, str):
        raise TypeError(f"device must be a string (cpu, cuda, cuda:N or auto), not {type(device).__name__}")
    try:
        resolved: str = resolve_device(device)
    except ValueError as exc:   # the CLI's message names its option, --device
        raise type(exc)(str(exc).removeprefix("--")) from None
    return resolved


def _model_paths(paths: object) -> dict[str, str]:
    if paths is None:
        return {}
    if not isinstance(paths, Mapping) or not all(isinstance(k, str) and isinstance(v, (str, os.PathLike)) for k, v in paths.items()):
        raise TypeError("model_paths must map catalogue names to weight paths, e.g. {'dpt-hybrid-midas': '/weights/dpt'}")
    return {k: os.fspath(v) for k, v in paths.items()}


def _judge(judge: object) -> tuple[RunOptions, Any]:
    """The run options and the cost ledger of the judge settings given (none: no judge, no ledger)."""
    if judge is None:
        return RunOptions(), None
    if not isinstance(judge, Mapping):
        raise TypeError(f"judge must be a dict of judge settings ({', '.join(_JUDGE_KEYS)}), not {type(judge).__name__}")
    unknown = sorted(set(judge) - set(_JUDGE_KEYS))
    if unknown:
        raise ValueError(f"judge: unknown setting(s) {', '.join(map(str, unknown))} (known: {', '.join(_JUDGE_KEYS)})")
    from ..vlm.suite_run import judge_options, run_options

    options = judge_options(*(judge.get(k) for k in _JUDGE_KEYS))
    return run_options(options), options["judge_ledger"]


def _model_name(model: object) -> str | None:
    if model is None:
        return None
    if not isinstance(model, str):
        raise TypeError(f"model must be a string naming the model, not {type(model).__name__}")
    if not model or "/" in model or model != model.strip():
        raise ValueError(f"model must be a non-empty name without '/' or surrounding spaces, not {model!r}")
    return model
