"""Token prices (a user-editable YAML table) and the run's cost ledger."""
from __future__ import annotations

import fnmatch
import threading
from dataclasses import dataclass, field
from pathlib import Path

import yaml

DEFAULT_PRICES = Path(__file__).resolve().parent.parent / "data" / "judge_prices.yaml"


@dataclass(frozen=True)
class Price:
    input: float   # USD per 1M prompt tokens
    output: float  # USD per 1M completion tokens

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


def load_prices(extra: str | Path | None = None) -> dict[str, Price]:
    """Default table, with the user's file's entries first (they win)."""
    table: dict[str, Price] = {}
    for path in ([Path(extra)] if extra else []) + [DEFAULT_PRICES]:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        for pattern, entry in (data.get("models") or {}).items():
            try:
                price = Price(float(entry["input"]), float(entry["output"]))
            except (TypeError, KeyError, ValueError):
                raise ValueError(f"{path}: price of '{pattern}' needs numeric 'input' and 'output' (USD per 1M tokens)") from None
            table.setdefault(str(pattern), price)
    return table


def price_for(model: str, table: dict[str, Price]) -> Price | None:
    return next((p for pat, p in table.items() if fnmatch.fnmatchcase(model, pat)), None)


@dataclass
class Ledger:
    """Calls, tokens and cost of a run; thread-safe because judge calls run concurrently."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = True            # False once a call's model had no price in the table
    images: set = field(default_factory=set)
    prompts: set = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, reply, image: str = "", prompt: str = "") -> None:
        with self._lock:
            if reply.cached:
                self.cache_hits += 1
            else:
                self.calls += reply.attempts
                self.prompt_tokens += reply.prompt_tokens
                self.completion_tokens += reply.completion_tokens
                if reply.cost_usd is None:
                    self.priced = False
                else:
                    self.cost_usd += reply.cost_usd
            if not reply.ok:
                self.failures += 1
            if image and not reply.cached:  # per-image cost: spend over the images that needed a call
                self.images.add(image)
            if prompt and not reply.cached:
                self.prompts.add(prompt)

    def summary(self) -> dict:
        cost = self.cost_usd if self.priced else None
        n_img, n_prompt = len(self.images), len(self.prompts)
        return {"http_requests": self.calls, "cache_hits": self.cache_hits, "failed_questions": self.failures,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": cost, "images": n_img, "prompts": n_prompt,
                "cost_per_image_usd": cost / n_img if cost is not None and n_img else None,
                "cost_per_1000_prompts_usd": 1000 * cost / n_prompt if cost is not None and n_prompt else None}

    def lines(self) -> list[str]:
        s = self.summary()
        head = (f"judge: {s['http_requests']} HTTP requests, {s['cache_hits']} answers from the cache, "
                f"{s['failed_questions']} failed questions; tokens in {s['prompt_tokens']}, out {s['completion_tokens']}")
        if s["cost_usd"] is None:
            return [head, "judge cost: unknown, the judge model has no entry in the price table (see docs/judge.md)"]
        money = (lambda v: "n/a" if v is None else f"${v:.4f}")
        return [head, f"judge cost: {money(s['cost_usd'])} total, {money(s['cost_per_image_usd'])} per image, "
                      f"{money(s['cost_per_1000_prompts_usd'])} per 1000 prompts"]
