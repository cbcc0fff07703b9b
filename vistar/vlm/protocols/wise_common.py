"""Shared by both WISE protocols: the item, the importer for WISE's JSON files, category by prompt id."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .base import Items, make_prompt, read_json


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


def load_wise(folder: Path, files: list[str], ranges, protocol: str) -> Items:
    """Items of the given JSON files; records missing a field or outside the id ranges are reported."""
    items, problems, seen = [], [], set()
    missing = [f for f in files if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: WISE data file(s) not found: {', '.join(missing)}")
    for name in files:
        path = folder / name
        data = read_json(path)
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of prompt records")
        for n, rec in enumerate(data):
            where = f"{path}: record {n}"
            if not isinstance(rec, dict):
                problems.append(f"{where}: not an object")
                continue
            bad = [k for k in ("prompt_id", "Prompt", "Explanation") if not rec.get(k) and rec.get(k) != 0]
            if bad:
                problems.append(f"{where}: field '{bad[0]}' missing or empty")
                continue
            try:
                pid = int(rec["prompt_id"])
            except (TypeError, ValueError):
                problems.append(f"{where}: field 'prompt_id' is not an integer: {rec['prompt_id']!r}")
                continue
            category = category_of(pid, ranges)
            if category is None or pid in seen:
                problems.append(f"{where}: field 'prompt_id' {pid} is {'a duplicate' if pid in seen else 'outside the WISE id ranges'}")
                continue
            seen.add(pid)
            items.append(WiseItem(str(pid), str(rec["Prompt"]), str(rec["Explanation"]), category,
                                  str(rec.get("Subcategory") or ""), protocol))
    items.sort(key=lambda it: int(it.id))
    return Items(items, problems)


def weighted_overall(category_means: dict[str, float], weights: dict[str, float]) -> float | None:
    """The WISE headline: fixed category weights; None unless every weighted category was scored."""
    if any(c not in category_means for c in weights):
        return None
    return sum(w * category_means[c] for c, w in weights.items())
