"""Shared by both WISE protocols: the item, the importer for WISE's JSON files, category by prompt id, the
benchmark's own questions of vllm_eval.py / WISE_legacy/gpt_eval.py and the aggregation of calculate_verified.py /
WISE_legacy/Calculate.py (each protocol names its script, reply fields and category weights)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable, Dict, List

import pandas as pd

from ..errors import ReplyFormatError
from ..images import file_as_is
from ..types import WireFormat
from .aggregate import VISTAR_PARTIAL, each_model, means_by, ok_rows, weighted_overall
from .base import Family, Items, Query, make_prompt, read_json_list
from .upstream_source import function, verified_source


@dataclass(frozen=True)
class WiseItem:
    id: str                 # WISE prompt_id as text ("1".."1000"); images are IMAGES/<model>/<id>.png
    prompt: str
    explanation: str
    category: str           # ours, from the prompt id (see CATEGORY ranges)
    subcategory: str
    protocol: str

    def to_prompt(self):
        role, angle = ("IL", "CUL") if self.category == "culture" else ("ED", "PSC")
        return make_prompt(self.id, role, angle, self.prompt, self.protocol,
                           category=self.category, subcategory=self.subcategory or None)


def category_of(pid: int, ranges: list[tuple[int, int, str]]) -> str | None:
    return next((name for lo, hi, name in ranges if lo <= pid <= hi), None)


def load_wise(folders: list[Path], files: list[str], ranges, protocol: str, union: str | None = None) -> Items:
    """Items of the benchmark's JSON files, read from the first of `folders` holding any of them (or, holding
    none, from the `union` file of all categories); records that cannot be used are reported."""
    folder = next((f for f in folders if any((f / name).is_file() for name in files)), None)
    problems: list[str] = []
    if folder is not None:
        paths = [folder / name for name in files if (folder / name).is_file()]
        problems += [f"{folder / name}: not found; its categories have no items" for name in files if not (folder / name).is_file()]
    else:
        paths = [f / union for f in folders if union and (f / union).is_file()][:1]
        if not paths:
            raise FileNotFoundError(f"{folders[0]}: WISE data files not found ({', '.join(files + ([union] if union else []))})")
    items, seen = [], set()
    for path in paths:
        data = read_json_list(path, problems, "prompt records")
        if data is None:
            continue
        for n, rec in enumerate(data):
            item = _item(rec, f"{path}: record {n}", ranges, protocol, seen, problems)
            if item is not None:
                seen.add(int(item.id))
                items.append(item)
    items.sort(key=lambda it: int(it.id))
    return Items(items, problems)


def _item(rec, where: str, ranges, protocol: str, seen: set, problems: list[str]) -> WiseItem | None:
    if not isinstance(rec, dict):
        problems.append(f"{where}: not an object")
        return None
    bad = [k for k in ("prompt_id", "Prompt", "Explanation") if rec.get(k) is None or not str(rec[k]).strip()]
    if bad:
        problems.append(f"{where}: field '{bad[0]}' missing or empty")
        return None
    pid = _integer(rec["prompt_id"])
    where = f"{where} (prompt_id {rec['prompt_id']!r})"
    if pid is None:
        problems.append(f"{where}: field 'prompt_id' is not an integer")
        return None
    category = category_of(pid, ranges)
    if category is None or pid in seen:
        problems.append(f"{where}: field 'prompt_id' {pid} is {'a duplicate' if pid in seen else 'outside the WISE id ranges'}")
        return None
    return WiseItem(str(pid), str(rec["Prompt"]), str(rec["Explanation"]), category, str(rec.get("Subcategory") or ""), protocol)


def _integer(value) -> int | None:
    """An id written as 12, 12.0 or "12"; None for anything else (True, 12.5, "12a")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    try:
        return int(str(value).strip())
    except ValueError:
        return None


# --- the benchmark's own questions: vllm_eval.py (verified) and WISE_legacy/gpt_eval.py ----------------------

@dataclass(frozen=True)
class Script:
    """One WISE evaluation script: its file, the pinned function that sends the messages, the question id, the
    reply fields its extract_scores must find, what the protocol keeps of them, and its request format."""

    file: str
    call: str
    qid: str
    keys: tuple[str, ...]
    answer: Callable[[dict], dict]
    wire: WireFormat


_TYPING = {"Dict": Dict, "Any": Any, "List": List}  # the names the scripts' annotations use


def upstream_family(script: Script) -> Family:
    return Family("WISE", partial(upstream_queries, script))


@lru_cache(maxsize=None)
def _upstream_pieces(file: str, call: str, folder: str):
    build = function("WISE", folder, file, "build_evaluation_messages", _TYPING)
    extract = function("WISE", folder, file, "extract_scores", {"re": re, **_TYPING})
    verified_source("WISE", folder, file, call)
    return build, extract


def upstream_queries(script: Script, folder: str, item, criteria=None, extra=None) -> list[Query]:
    build, extract = _upstream_pieces(script.file, script.call, str(folder))
    messages = build({"Prompt": item.prompt, "Explanation": item.explanation, "Subcategory": item.subcategory}, "")
    system, user = messages[0]["content"][0]["text"], messages[1]["content"][0]["text"]

    def parse(text: str) -> dict:
        scores = extract(text)
        missing = [k for k in script.keys if k not in scores]
        if missing:
            raise ReplyFormatError(f"the benchmark's extract_scores finds no {', '.join(missing)} in the reply")
        return script.answer(scores)

    return [Query(script.qid, user, parse, system, wire=script.wire, encode=file_as_is)]


# --- aggregation: calculate_verified.py and WISE_legacy/Calculate.py ----------------------------------------------

WISE_IDS = range(1, 1001)  # the upstream scripts' EXPECTED_PROMPT_RANGES["all"]


def summarize_wise(df: pd.DataFrame, metric: str, weights: dict[str, float], value=None) -> dict:
    """Category means over ok rows; the overall (`weights`: the script's category weights) only when every
    prompt id 1-1000 has a score, as upstream (which aborts otherwise: a missing image or a failed judge answer
    leaves the id out of its scores file). `printed` is what the upstream script prints: categories and the
    overall (from the unrounded category means) with two decimals. `value(details, score)`: the number upstream
    averages for a row (default: its score)."""
    ok, coverage = ok_rows(df, metric)
    if value is not None:
        ok["score"] = [value(d, score) for d, score in zip(ok["d"], ok["score"])]
    out = {}
    for model, g in each_model(df, metric, ok):
        cats = means_by(g, "category")
        missing = sorted(set(WISE_IDS) - {int(p) for p in g["prompt_id"] if str(p).isdigit()})
        overall = weighted_overall(cats, weights) if not missing else None
        out[model] = {"categories": cats, "overall": overall, "coverage": coverage.get(model),
                      "missing_ids": len(missing),
                      "overall_rule": ("upstream: every prompt id 1-1000 must have a score, else no overall "
                                       f"({len(missing)} missing)"),
                      "printed": {"categories": {c.upper(): f"{v:.2f}" for c, v in cats.items()},
                                  "overall": f"{overall:.2f}" if overall is not None else None},
                      "vistar_overall_partial": weighted_overall(cats, weights),
                      "vistar_overall_partial_rule": VISTAR_PARTIAL + " (needs every category, not every id)"}
    return out


def wise_headline(numbers: dict) -> dict:
    """What `vistar score --suite wise-*` prints per model: the upstream-printed overall and what it lacks."""
    return {"overall": numbers["printed"]["overall"], "missing_ids": numbers["missing_ids"], "coverage": numbers["coverage"]}
