"""Judge settings: endpoint, model, decoding and robustness knobs, read from the run options.

The API key itself never enters this object, the options, logs or caches: only the *name* of the
environment variable that holds it does.
"""
from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import yaml

from ..models.catalog import vistar_home

MODES = ("per-question", "batched")


@dataclass(frozen=True)
class JudgeConfig:
    url: str                       # OpenAI-compatible base URL, e.g. https://api.openai.com/v1
    model: str                     # model id sent in each request
    key_env: str | None = None     # name of the environment variable holding the API key
    model_version: str = ""        # pin for the cache key when the id alone does not fix the weights
    mode: str = "per-question"     # HWPQ: one call per question (paper) or all questions in one call
    votes: int = 3                 # HWPQ independent queries per question, majority vote
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 1024
    concurrency: int = 4           # requests in flight at once
    timeout_s: float = 60.0
    max_retries: int = 4           # per request, on 429 / 5xx / timeout / unreadable body
    backoff_s: float = 1.0         # first retry delay; doubles each retry
    max_backoff_s: float = 30.0
    max_reasks: int = 2            # re-asks of a malformed reply before recording a failure
    image_max_side: int = 1536     # larger images are downscaled (aspect kept) before sending; 0 = never
    cache_path: str | None = None  # SQLite file; default $VISTAR_HOME/judge_cache.sqlite
    cache_only: bool = False       # rebuild from the cache, never call the judge
    prices: str | None = None      # YAML price table merged over the default one

    def __post_init__(self):
        _coerce_numbers(self)
        if self.mode not in MODES:
            raise ValueError(f"judge mode must be one of {', '.join(MODES)}, not '{self.mode}'")
        if self.votes < 1 or self.votes % 2 == 0:
            raise ValueError(f"judge votes must be a positive odd number (majority vote), not {self.votes}")
        if self.image_max_side < 0:
            raise ValueError("judge image_max_side must be 0 (no downscaling) or a positive pixel count")
        if self.concurrency < 1 or self.max_retries < 0 or self.max_reasks < 0 or self.timeout_s <= 0:
            raise ValueError("judge concurrency and timeout must be positive, retries and re-asks non-negative")

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.key_env) if self.key_env else None

    @property
    def cache_file(self) -> Path:
        return Path(self.cache_path).expanduser() if self.cache_path else vistar_home() / "judge_cache.sqlite"

    def decoding(self) -> dict:
        """Everything besides the request text that changes the answer (the sent image size included)."""
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens,
                "image_max_side": self.image_max_side}

    def public(self) -> dict:
        """What may be written to a run directory (the key's variable name, never its value)."""
        return asdict(self)


_FIELDS = {f.name for f in fields(JudgeConfig)}
# decoding settings are part of the cache key: `temperature: 0` (YAML int) and the default 0.0 must be one key
_NUMBERS = {"temperature": float, "seed": int, "max_tokens": int, "image_max_side": int}


def _coerce_numbers(cfg: JudgeConfig) -> None:
    """Give the decoding settings their declared type; a value that is not that kind of number is an error."""
    for name, kind in _NUMBERS.items():
        object.__setattr__(cfg, name, _number(name, kind, getattr(cfg, name)))


def _number(name: str, kind: type, given) -> float | int:
    if kind is int and isinstance(given, int) and not isinstance(given, bool):
        return given  # exact, however large
    try:
        number = float(given) if not isinstance(given, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or (kind is int and not number.is_integer()):
        raise ValueError(f"judge {name} must be {'an integer' if kind is int else 'a number'}, not {given!r}")
    return kind(number)


def config_from_options(options: dict) -> JudgeConfig | None:
    """`judge_config` (a YAML file of JudgeConfig fields) overlaid by `judge_<field>` options;
    None when no judge URL and model are set."""
    values: dict = {}
    path = options.get("judge_config")
    if path:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{path}: judge config must be a mapping of settings")
        unknown = set(loaded) - _FIELDS
        if unknown:
            raise ValueError(f"{path}: unknown judge setting(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_FIELDS))})")
        values.update(loaded)
    for name in _FIELDS:
        value = options.get(f"judge_{name}")
        if value is not None:
            values[name] = value
    if not values.get("url") or not values.get("model"):
        return None
    return JudgeConfig(**values)
