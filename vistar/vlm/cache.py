"""Persistent judge cache (SQLite): successful answers only, keyed by everything that could change them.

Key = judge model id + version, protocol name@version, prompt-template hash, the hash of the request text
itself (so edited benchmark data or questions are asked anew), image sha256, item/question id (vote index
included) and decoding parameters. Failures are never stored, so a rerun re-asks exactly what is missing or
failed; with `cache_only` the scores are rebuilt without any call.

Caches written before the text hash joined the key hold answers under `legacy_key`. They are reused (and
copied under the current key) only for requests whose text is fixed by the old key's parts
(`JudgeRequest.text_fixed_by_id`: HWPQ); for the benchmark protocols an edited record would get the stale
answer, so those are asked once more.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path

from .config import JudgeConfig
from .types import JudgeRequest, text_hash

_SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY, model TEXT, protocol TEXT, template_hash TEXT, image_sha256 TEXT, item_id TEXT,
    decoding TEXT, raw TEXT, parsed TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, created TEXT)"""


def _decoding(cfg: JudgeConfig, req: JudgeRequest) -> str:
    """The decoding part of both keys (JudgeConfig holds the settings as float/int, so `0` and `0.0` agree)."""
    decoding = {**cfg.decoding(), "seed": cfg.seed + req.vote, "max_tokens": req.max_tokens or cfg.max_tokens}
    return json.dumps(decoding, sort_keys=True)


def cache_key(cfg: JudgeConfig, req: JudgeRequest) -> str:
    parts = [cfg.model, cfg.model_version, req.protocol, req.template_hash, text_hash(req.system, req.user),
             req.image_sha256, req.item_id, _decoding(cfg, req)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def legacy_key(cfg: JudgeConfig, req: JudgeRequest) -> str:
    """The key as vistar computed it before the request text hash joined it: the same parts without it."""
    parts = [cfg.model, cfg.model_version, req.protocol, req.template_hash, req.image_sha256, req.item_id,
             _decoding(cfg, req)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class JudgeCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute(_SCHEMA)

    def get(self, key: str) -> str | None:
        """The raw reply stored under `key` (the judge re-parses it; `parsed` is kept for people reading the file)."""
        with self._lock:
            row = self._db.execute("SELECT raw FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def put(self, key: str, cfg: JudgeConfig, req: JudgeRequest, raw: str, parsed, prompt_tokens: int, completion_tokens: int) -> None:
        decoding = json.dumps({**cfg.decoding(), "seed": cfg.seed + req.vote}, sort_keys=True)
        row = (key, f"{cfg.model}:{cfg.model_version}", req.protocol, req.template_hash, req.image_sha256, req.item_id,
               decoding, raw, json.dumps(parsed, sort_keys=True), prompt_tokens, completion_tokens,
               time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", row)

    def adopt(self, old_key: str, new_key: str, parsed) -> None:
        """Store the answer found under `old_key` under `new_key` too (with its value as parsed now)."""
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO answers SELECT ?, model, protocol, template_hash, image_sha256, "
                             "item_id, decoding, raw, ?, prompt_tokens, completion_tokens, created FROM answers "
                             "WHERE key = ?", (new_key, json.dumps(parsed, sort_keys=True), old_key))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
