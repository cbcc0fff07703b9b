"""The questionnaire: four levels of weighted P/N question pairs, validation with safe repair, and the score.

Score = Σ_l w_l · Σ_i w_{l,i} · S_{l,i}, with S = 1 iff the positive question is answered True and the
negative one False (majority over the votes).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import DataError

LEVELS = ("L1", "L2", "L3", "L4")
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "data" / "hwpq_schema.json"
_ID = re.compile(r"^[A-Za-z0-9_.-]+$")
MIN_QUESTION = 8


@dataclass(frozen=True)
class Pair:
    id: str
    weight: float
    positive: str
    negative: str


@dataclass(frozen=True)
class Level:
    level: str
    weight: float
    pairs: tuple[Pair, ...]


@dataclass(frozen=True)
class Questionnaire:
    levels: tuple[Level, ...]
    prompt: str = ""
    prompt_fingerprint: str = ""
    angle: str | None = None
    source: dict = field(default_factory=dict)
    repairs: tuple[str, ...] = ()

    @property
    def hash(self) -> str:
        """Identity of the questions and weights (edits change it, so cached answers never go stale)."""
        payload = json.dumps([asdict(lv) for lv in self.levels], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def questions(self) -> list[tuple[str, str]]:
        """(question id, text) for every P and N question, in questionnaire order."""
        return [(f"{p.id}.{side}", text) for lv in self.levels for p in lv.pairs
                for side, text in (("P", p.positive), ("N", p.negative))]

    def to_json(self) -> dict:
        data = {"schema_version": 1, "prompt": self.prompt, "prompt_fingerprint": self.prompt_fingerprint,
                "angle": self.angle, "source": self.source, "repairs": list(self.repairs),
                "levels": [{"level": lv.level, "weight": lv.weight, "pairs": [asdict(p) for p in lv.pairs]} for lv in self.levels]}
        return {k: v for k, v in data.items() if v is not None}


def score(q: Questionnaire, answers: dict[str, bool]) -> tuple[float, list[dict]]:
    """The HWPQ score from final (majority) answers, and the per-pair breakdown."""
    total, breakdown = 0.0, []
    for lv in q.levels:
        for p in lv.pairs:
            pos, neg = answers[f"{p.id}.P"], answers[f"{p.id}.N"]
            s = 1.0 if pos and not neg else 0.0
            total += lv.weight * p.weight * s
            breakdown.append({"level": lv.level, "pair": p.id, "P": pos, "N": neg, "S": s, "w_level": lv.weight, "w_pair": p.weight})
    return total, breakdown


def majority(votes: list[bool]) -> bool:
    return sum(bool(v) for v in votes) * 2 > len(votes)


def validate(data, where: str = "questionnaire") -> Questionnaire:
    """Strict check (no repair): the questionnaire as written, or DataError naming the field."""
    q, repairs = repair(data, where)
    if repairs:
        raise DataError(f"{where}: {repairs[0]}" + (f" (and {len(repairs) - 1} more problem(s))" if len(repairs) > 1 else ""))
    return q


def repair(data, where: str = "questionnaire") -> tuple[Questionnaire, list[str]]:
    """Keep what is sound, fix what is safely fixable, report every change. Safe repairs: drop malformed pairs
    and levels, fill missing/duplicate pair ids, give equal weights when none are given, renormalise weights.
    Unrepairable (DataError): not an object, no `levels` list, or no usable pair at all."""
    if not isinstance(data, dict) or not isinstance(data.get("levels"), list):
        raise DataError(f"{where}: must be a JSON object with a 'levels' list")
    repairs: list[str] = []
    levels: list[tuple[str, float | None, list[Pair]]] = []
    seen_levels, pair_ids = set(), set()
    for n, raw in enumerate(data["levels"]):
        at = f"levels[{n}]"
        name = raw.get("level") if isinstance(raw, dict) else None
        if name not in LEVELS or name in seen_levels or not isinstance(raw.get("pairs"), list):
            repairs.append(f"{at}: dropped (level must be one of {', '.join(LEVELS)}, once, with a 'pairs' list)")
            continue
        weight = raw.get("weight")
        if weight is not None and (_weight(weight) is None or weight < 0):   # the schema lets a level weigh 0
            repairs.append(f"{at} ({name}): dropped (weight must be a number >= 0, got {weight!r})")
            continue
        seen_levels.add(name)
        pairs = _pairs(raw["pairs"], name, at, repairs, pair_ids)
        if not pairs:
            repairs.append(f"{at} ({name}): dropped, no usable pair")
            continue
        levels.append((name, _weight(weight), pairs))
    if not levels:
        raise DataError(f"{where}: no usable question pair")
    if [name for name, _, _ in levels] != sorted(name for name, _, _ in levels):
        repairs.append("levels reordered to L1..L4")
        levels.sort(key=lambda t: t[0])
    weights = _normalise([w for _, w, _ in levels], "level weights", repairs)
    built = tuple(Level(name, w, tuple(pairs)) for (name, _, pairs), w in zip(levels, weights))
    angle = data.get("angle") if data.get("angle") in ("SF", "CUL", "MA") else None
    q = Questionnaire(built, str(data.get("prompt") or ""), str(data.get("prompt_fingerprint") or ""), angle,
                      data.get("source") if isinstance(data.get("source"), dict) else {}, tuple(repairs))
    return q, repairs


def _pairs(raw_pairs: list, level: str, at: str, repairs: list[str], ids: set) -> list[Pair]:
    """Usable pairs of one level; `ids` collects pair ids across levels (they must be unique overall)."""
    kept: list[tuple[str | None, float | None, str, str]] = []
    for i, p in enumerate(raw_pairs):
        where = f"{at}.pairs[{i}]"
        if not isinstance(p, dict):
            repairs.append(f"{where}: dropped (not an object)")
            continue
        pos, neg = p.get("positive"), p.get("negative")
        if not (isinstance(pos, str) and isinstance(neg, str)) or min(len(pos.strip()), len(neg.strip())) < MIN_QUESTION:
            repairs.append(f"{where}: dropped (needs a 'positive' and a 'negative' question of at least {MIN_QUESTION} characters)")
            continue
        if pos.strip().lower() == neg.strip().lower():
            repairs.append(f"{where}: dropped (positive and negative questions are identical)")
            continue
        w = p.get("weight")
        if w is not None and (_weight(w) is None or _weight(w) <= 0):
            repairs.append(f"{where}: dropped (weight must be a positive number, got {w!r})")
            continue
        kept.append((p.get("id"), _weight(w), pos.strip(), neg.strip()))
    weights = _normalise([w for _, w, _, _ in kept], f"{at} pair weights", repairs) if kept else []
    pairs = []
    for n, ((pid, _, pos, neg), w) in enumerate(zip(kept, weights), start=1):
        if not isinstance(pid, str) or not _ID.match(pid) or pid in ids:
            new = f"{level}.{n}"
            while new in ids:
                new += "b"
            repairs.append(f"{at}: pair id {pid!r} replaced by '{new}' (missing, invalid or duplicate)")
            pid = new
        ids.add(pid)
        pairs.append(Pair(pid, w, pos, neg))
    return pairs


def _weight(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _normalise(weights: list[float | None], what: str, repairs: list[str]) -> list[float]:
    """Renormalise to sum 1; all missing -> equal weights; some missing -> the missing ones get the mean of the rest
    (a weight that is given but unusable dropped its level or pair before this)."""
    given = [w for w in weights if w is not None]
    if len(given) != len(weights):
        if not given or sum(given) <= 0:
            repairs.append(f"{what}: missing, set equal")
            return [1.0 / len(weights)] * len(weights)
        fill = sum(given) / len(given)
        repairs.append(f"{what}: {len(weights) - len(given)} missing, set to the mean of the others")
        weights = [w if w is not None else fill for w in weights]
    total = sum(weights)
    if total <= 0:
        repairs.append(f"{what}: all zero, set equal")
        return [1.0 / len(weights)] * len(weights)
    if not math.isclose(total, 1.0, abs_tol=1e-6):
        repairs.append(f"{what}: summed to {total:g}, renormalised to 1")
    return [w / total for w in weights]
