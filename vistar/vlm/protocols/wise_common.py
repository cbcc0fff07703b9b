"""Shared by both WISE protocols: the item, the importer for WISE's JSON files, category by prompt id."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .base import Items, make_prompt, read_json_list


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


def wise_headline(numbers: dict) -> dict:
    """What `vistar score --suite wise-*` prints per model: the upstream-printed overall and what it lacks."""
    return {"overall": numbers["printed"]["overall"], "missing_ids": numbers["missing_ids"], "coverage": numbers["coverage"]}
