"""`vistar merge`: one run folder from several (the shards of `vistar score --shard K/N`, or runs over disjoint
image folders), so `vistar report` and `vistar calibrate` see one tensor.

Refused rather than guessed: runs scored with different ontologies (their scores are not comparable), the same
(image, model, prompt, sample, metric) in two runs (overlapping shards), shards of different N or a shard twice,
and unfinished runs unless `partial` is asked for. Nothing is written until every check has passed.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from .runmeta import versions, write_json_atomic
from .store import IDENTITY, ResultStore, read_visible
from ..atomic import write_text_atomic


class MergeError(ValueError):
    pass


@dataclass
class MergeSummary:
    rows_by_status: dict[str, int] = field(default_factory=dict)
    missing_shards: list[int] = field(default_factory=list)
    problems: int = 0


def merge_runs(sources: list[Path], out: Path, *, partial: bool = False, command: str = "") -> MergeSummary:
    sources = [Path(s) for s in sources]
    if not sources:
        raise MergeError("nothing to merge: give at least one run folder")
    metas = [_meta(src) for src in sources]
    _check_compatible(sources, metas, partial)
    summary = MergeSummary(missing_shards=_missing_shards(sources, metas))
    if summary.missing_shards and not partial:
        count = metas[0]["shard"]["count"]
        raise MergeError(f"shard(s) {', '.join(f'{k}/{count}' for k in summary.missing_shards)} missing; "
                         "score them first, or pass --partial to merge without them")
    tables = [read_visible(src) for src in sources]
    _check_disjoint(sources, tables)
    models = _merged_models(sources, metas)
    if out.exists() and any(out.iterdir()):
        raise MergeError(f"{out}: not empty; merge writes a new run folder")

    store = ResultStore(out)
    for table in tables:
        if len(table):
            store.append(table)
            for status, count in zip(*_counts(table)):
                summary.rows_by_status[status] = summary.rows_by_status.get(status, 0) + count
    store.compact()
    problems = _merged_problems(sources)
    summary.problems = len(problems)
    write_text_atomic(out / "problems.jsonl", "".join(problems))
    write_json_atomic(out / "run.json", _merged_meta(sources, metas, models, summary, partial, command))
    return summary


def _meta(src: Path) -> dict:
    try:
        meta = json.loads((src / "run.json").read_text())
    except FileNotFoundError:
        raise MergeError(f"{src}: not a run folder (no run.json); give folders written by `vistar score`") from None
    except (OSError, ValueError) as exc:
        raise MergeError(f"{src / 'run.json'}: unreadable ({exc})") from None
    if not isinstance(meta, dict):
        raise MergeError(f"{src / 'run.json'}: not a JSON object")
    return meta


def _check_compatible(sources: list[Path], metas: list[dict], partial: bool) -> None:
    unfinished = [f"{src} ({meta.get('status')})" for src, meta in zip(sources, metas) if meta.get("status") != "complete"]
    if unfinished and not partial:
        raise MergeError(f"unfinished run(s): {', '.join(unfinished)}; resume them with the same `vistar score` "
                         "command, or pass --partial to merge what they hold")
    hashes = {meta.get("ontology_hash") for meta in metas}
    if len(hashes) > 1:
        listing = "; ".join(f"{src}: {meta.get('ontology_hash')}" for src, meta in zip(sources, metas))
        raise MergeError(f"runs scored with different ontologies are not comparable ({listing})")
    shards = [meta.get("shard") for meta in metas]
    if any(shards):
        if not all(shards) or len({s["count"] for s in shards}) > 1:
            raise MergeError("shards of different splits (or sharded with unsharded runs): "
                             + "; ".join(f"{src}: {s and str(s['index']) + '/' + str(s['count'])}" for src, s in zip(sources, shards)))
        seen: dict[int, Path] = {}
        for src, shard in zip(sources, shards):
            if shard["index"] in seen:
                raise MergeError(f"shard {shard['index']}/{shard['count']} given twice: {seen[shard['index']]} and {src}")
            seen[shard["index"]] = src


def _merged_models(sources: list[Path], metas: list[dict]) -> dict:
    """Union of the runs' loaded weights; the same weight name with another sha256 means other scores: refused."""
    models: dict = {}
    origin: dict[str, Path] = {}
    for src, meta in zip(sources, metas):
        for name, entry in (meta.get("models") or {}).items():
            known = models.get(name)
            if known and isinstance(entry, dict) and known.get("sha256") != entry.get("sha256"):
                raise MergeError(f"{name}: {origin[name]} loaded sha256 {known.get('sha256')}, {src} loaded "
                                 f"{entry.get('sha256')}; runs with different weights are not comparable")
            models.setdefault(name, entry)
            origin.setdefault(name, src)
    return models


def _missing_shards(sources: list[Path], metas: list[dict]) -> list[int]:
    shards = [meta.get("shard") for meta in metas]
    if not shards or not all(shards):
        return []
    return sorted(set(range(1, shards[0]["count"] + 1)) - {s["index"] for s in shards})


def _check_disjoint(sources: list[Path], tables: list[pa.Table]) -> None:
    owner: dict[tuple, Path] = {}
    for src, table in zip(sources, tables):
        columns = [table.column(c).to_pylist() for c in IDENTITY]
        for identity in zip(*columns):
            if identity in owner:
                shown = ", ".join(f"{c}={v}" for c, v in zip(IDENTITY, identity))
                raise MergeError(f"the same row is in {owner[identity]} and {src} ({shown}): the runs overlap")
            owner[identity] = src


def _counts(table: pa.Table) -> tuple[list[str], list[int]]:
    counts = table.column("status").value_counts()
    return counts.field("values").to_pylist(), counts.field("counts").to_pylist()


def _merged_problems(sources: list[Path]) -> list[str]:
    """Every source's problems.jsonl lines, each once (shards repeat none by design; reruns might)."""
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


def _merged_meta(sources: list[Path], metas: list[dict], models: dict, summary: MergeSummary, partial: bool,
                 command: str) -> dict:
    def common(key):
        values = {json.dumps(meta.get(key), sort_keys=True) for meta in metas}
        return metas[0].get(key) if len(values) == 1 else None

    return {"command": command, "merged_from": [
                {"run": str(src.resolve()), **{k: meta.get(k) for k in ("shard", "status", "started", "finished", "hardware", "device")}}
                for src, meta in zip(sources, metas)],
            "images": common("images"), "prompts": common("prompts"), "prompts_sha256": common("prompts_sha256"),
            "ontology_hash": metas[0].get("ontology_hash"), "metric_versions": common("metric_versions"),
            "stage_versions": common("stage_versions"), "models": models, "versions": versions(),
            "missing_shards": summary.missing_shards, "counts": summary.rows_by_status,
            "status": "partial" if partial and (summary.missing_shards or any(m.get("status") != "complete" for m in metas)) else "complete",
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
