"""`vistar merge`: one run folder from several (the shards of `vistar score --shard K/N`, or runs over disjoint image
folders), so `vistar report` and `vistar calibrate` see one tensor.

Refused rather than guessed, before anything is written: runs that did different work (other ontology, prompt file,
manifest, `--angles` or `--max-pixels`, another version of a metric or stage, another sha256 or runtime of a weight),
the same (image, model, prompt, sample, metric) in two runs, shards of different N, a shard twice, shards that saw
a different folder, and a missing shard or unfinished run unless `partial`. The sources are locked as `vistar
score` locks them while they are read, and the new folder is built beside its destination and renamed into place,
so an interrupted merge leaves no folder that looks like a run.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ..atomic import write_text_atomic
from .runmeta import FINISHED, versions, write_json_atomic
from .shards import label
from .store import IDENTITY, ResultStore, read_visible

SAME_WORK = ("ontology_hash", "prompts_sha256", "manifest_sha256", "angles", "max_pixels")  # must be equal in all
SAME_SHARD_WORK = ("work_digest",)  # must be equal across the shards of one split


class MergeError(ValueError):
    pass


@dataclass
class MergeSummary:
    rows_by_status: dict[str, int] = field(default_factory=dict)
    missing_shards: list[int] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)   # sources merged under --partial that had not finished
    problems: int = 0


def merge_runs(sources: list[Path], out: Path, *, partial: bool = False, command: str = "") -> MergeSummary:
    sources, out = [Path(s) for s in sources], Path(out)
    if not sources:
        raise MergeError("nothing to merge: give at least one run folder")
    resolved = [s.resolve() for s in sources]
    twice = next((s for i, s in enumerate(sources) if resolved[i] in resolved[:i]), None)
    if twice is not None:
        raise MergeError(f"{twice}: given twice")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise MergeError(f"{out}: exists and is not an empty folder; merge writes a new run folder")
    with contextlib.ExitStack() as locks:
        for src in sources:
            locks.enter_context(_source_lock(src))
        metas = [_meta(src) for src in sources]
        summary = MergeSummary(missing_shards=_check_compatible(sources, metas, partial),
                               unfinished=_unfinished(sources, metas))
        models = _merged_models(sources, metas)
        tables = [read_visible(src) for src in sources]
    _check_disjoint(sources, tables)
    building = out.parent / f".{out.name}.merging-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    try:
        store = ResultStore(building)
        for table in _in_write_order(tables):
            if len(table):
                store.append(table)
                for status, count in zip(*_counts(table)):
                    summary.rows_by_status[status] = summary.rows_by_status.get(status, 0) + count
        store.compact()
        problems = _merged_problems(sources)
        summary.problems = len(problems)
        write_text_atomic(building / "problems.jsonl", "".join(problems))
        write_json_atomic(building / "run.json", _merged_meta(sources, metas, models, summary, partial, command))
        if out.exists():
            out.rmdir()  # empty (checked above)
        os.replace(building, out)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return summary


def _in_write_order(tables: list[pa.Table]) -> list[pa.Table]:
    """Each source's rows keep their order (`shard`), numbered after every earlier source's: a source given later
    counts as written later, so `--dedupe latest` has an order across the merged runs."""
    shifted, base = [], 0
    for table in tables:
        shard = table.column("shard")
        shifted.append(table.set_column(table.schema.get_field_index("shard"), "shard", pc.add(shard, base)))
        if len(table):
            base += int(pc.max(shard).as_py()) + 1
    return shifted


@contextlib.contextmanager
def _source_lock(src: Path) -> Iterator[None]:
    """The lock `vistar score` holds on a run folder: a run resuming in a source would change it mid-read."""
    if not (src / "run.json").is_file():
        raise MergeError(f"{src}: not a run folder (no run.json); give folders written by `vistar score`")
    with open(src / ".lock", "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)  # "a+" opens at the end: the holder's pid is at the start
            raise MergeError(f"{src}: a `vistar score` is writing this run (pid {fh.read().strip() or '?'}); "
                             "merge it when that run has finished") from None
        yield


def _meta(src: Path) -> dict[str, Any]:
    try:
        meta = json.loads((src / "run.json").read_text())
    except (OSError, ValueError) as exc:
        raise MergeError(f"{src / 'run.json'}: unreadable ({exc})") from None
    if not isinstance(meta, dict):
        raise MergeError(f"{src / 'run.json'}: not a JSON object")
    return meta


def _unfinished(sources: list[Path], metas: list[dict[str, Any]]) -> list[str]:
    """Each source whose run.json does not say it finished, with the status it says."""
    return [f"{src} ({meta.get('status')})" for src, meta in zip(sources, metas) if meta.get("status") not in FINISHED]


def _check_compatible(sources: list[Path], metas: list[dict[str, Any]], partial: bool) -> list[int]:
    """Refuse runs whose rows do not belong in one tensor; returns the missing shard numbers (allowed if partial)."""
    unfinished = _unfinished(sources, metas)
    if unfinished and not partial:
        raise MergeError(f"unfinished run(s): {', '.join(unfinished)}; resume them with the same `vistar score` "
                         "command, or pass --partial to merge what they hold")
    shards = [meta.get("shard") for meta in metas]
    checked = SAME_WORK + (SAME_SHARD_WORK if any(shards) else ())
    for key in checked:
        _same(key, sources, [meta.get(key) for meta in metas])
    # a shard may have used fewer metrics: compare name by name (a stage in bf16 on one shard, fp32 on another: refused)
    for key in ("metric_versions", "stage_versions", "stage_precisions"):
        for name in sorted({n for meta in metas for n in (meta.get(key) or {})}):
            values = [(src, (meta.get(key) or {})[name]) for src, meta in zip(sources, metas) if name in (meta.get(key) or {})]
            _same(f"{key}.{name}", [s for s, _ in values], [v for _, v in values])
    if not any(shards):
        return []
    records: list[dict[str, Any]] = [s for s in shards if s]
    if len(records) < len(shards) or len({s["count"] for s in records}) > 1:
        raise MergeError("shards of different splits (or sharded with unsharded runs): "
                         + "; ".join(f"{src}: {label(s) or 'no shard'}" for src, s in zip(sources, shards)))
    seen: dict[int, Path] = {}
    for src, shard in zip(sources, records):
        if shard["index"] in seen:
            raise MergeError(f"shard {label(shard)} given twice: {seen[shard['index']]} and {src}")
        seen[shard["index"]] = src
    count = records[0]["count"]
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing and not partial:
        raise MergeError(f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing; "
                         "score them first, or pass --partial to merge without them")
    return missing


def _same(key: str, sources: list[Path], values: list[Any]) -> None:
    if len({json.dumps(v, sort_keys=True) for v in values}) > 1:
        listing = "; ".join(f"{src}: {value!r}" for src, value in zip(sources, values))
        raise MergeError(f"the runs differ in {key}, so their rows are not one evaluation ({listing})")


def _merged_models(sources: list[Path], metas: list[dict[str, Any]]) -> dict[str, Any]:
    """Union of the runs' loaded weights. The same weight with another sha256, or run another way (e.g. OCR in
    bf16 on one machine and fp32 on another, which keeps the row key), means other numbers: refused."""
    models: dict[str, Any] = {}
    origin: dict[str, Path] = {}
    for src, meta in zip(sources, metas):
        for name, entry in (meta.get("models") or {}).items():
            known = models.get(name)
            if known is not None and isinstance(entry, dict):
                for key in ("sha256", "provider"):
                    if known.get(key) != entry.get(key):
                        raise MergeError(f"{name}: {origin[name]} ran it with {key} {known.get(key)}, {src} with "
                                         f"{entry.get(key)}; runs with different weights or runtimes are not comparable")
            models.setdefault(name, entry)
            origin.setdefault(name, src)
    return models


def _check_disjoint(sources: list[Path], tables: list[pa.Table]) -> None:
    """No (image, model, prompt, sample, metric) in two runs (vectorised: millions of rows stay cheap)."""
    parts = [t.select(list(IDENTITY)).append_column("source", pa.array([i] * len(t), pa.int32()))
             for i, t in enumerate(tables)]
    table = pa.concat_tables(parts) if parts else None
    if table is None or not len(table):
        return
    counts = table.group_by(list(IDENTITY)).aggregate([("source", "count")])
    dup = counts.filter(pc.greater(counts["source_count"], 1))
    if not len(dup):
        return
    first = dup.slice(0, 1).to_pylist()[0]
    mask = pc.equal(table[IDENTITY[0]], first[IDENTITY[0]])
    for column in IDENTITY[1:]:
        mask = pc.and_(mask, pc.equal(table[column], first[column]))
    owners = [sources[i] for i in table.filter(mask)["source"].to_pylist()]
    shown = ", ".join(f"{c}={first[c]}" for c in IDENTITY)
    raise MergeError(f"the same row is in {owners[0]} and {owners[1]} ({shown}), and {len(dup) - 1} more: the runs overlap")


def _counts(table: pa.Table) -> tuple[list[str], list[int]]:
    counts = table.column("status").value_counts()
    return counts.field("values").to_pylist(), counts.field("counts").to_pylist()


def _merged_problems(sources: list[Path]) -> list[str]:
    """Every source's problems.jsonl lines, each once (every shard reports the whole prompt file's problems)."""
    seen, lines = set(), []
    for src in sources:
        path = src / "problems.jsonl"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and line not in seen:
                seen.add(line)
                lines.append(line + "\n")
    return lines


def _merged_meta(sources: list[Path], metas: list[dict[str, Any]], models: dict[str, Any], summary: MergeSummary, partial: bool,
                 command: str) -> dict[str, Any]:
    def union(key: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for meta in metas:
            out.update(meta.get(key) or {})
        return dict(sorted(out.items()))

    def where(values: list[Any]) -> Any:
        """One device when the runs agree, else each one, sorted and comma-separated (what a report shows)."""
        seen = sorted({str(v) for v in values if v})
        return seen[0] if len(seen) == 1 else ", ".join(seen) or None

    stages = sorted({n for meta in metas if isinstance(meta.get("stage_devices"), dict) for n in meta["stage_devices"]})
    roots = list(dict.fromkeys(meta.get("images") for meta in metas if meta.get("images")))
    unfinished = summary.missing_shards or summary.unfinished
    ending: dict[str, Any] = {"status": "partial" if partial and unfinished else "complete"}
    if not summary.rows_by_status:  # `vistar merge` exits 4: the folder must not read as done
        ending = {"status": "nothing_scored", "nothing_scored": "the source runs hold no row"}
    return {"command": command,
            "merged_from": [{"run": str(src.resolve()), **{k: meta.get(k) for k in (
                "shard", "status", "images", "started", "finished", "hardware", "device")}}
                for src, meta in zip(sources, metas)],
            # one root when the runs agree; else every root, which the calibration resolver tries in turn
            "images": roots[0] if len(roots) == 1 else roots,
            **{key: metas[0].get(key) for key in SAME_WORK + ("prompts", "work_digest")},
            "metric_versions": union("metric_versions"), "stage_versions": union("stage_versions"),
            "stage_precisions": union("stage_precisions"),
            "device": where([meta.get("device") for meta in metas]),
            "device_requested": where([meta.get("device_requested") for meta in metas]),
            "stage_devices": {n: where([(meta.get("stage_devices") or {}).get(n) for meta in metas]) for n in stages},
            "models": models, "versions": versions(), "missing_shards": summary.missing_shards,
            "counts": summary.rows_by_status, **ending, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
