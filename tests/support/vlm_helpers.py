"""Shared by the judge-layer tests: a fast-failing judge config and solid-colour test images."""
from __future__ import annotations

import numpy as np

from vistar.vlm.config import JudgeConfig

RED = (230, 20, 20)
BLUE = (20, 20, 230)
WHITE = (240, 240, 240)
BLACK = (10, 10, 10)


def solid(rgb, size: int = 24) -> np.ndarray:
    return np.tile(np.array(rgb, np.uint8), (size, size, 1))


def fast_config(url: str, tmp_path, **kw) -> JudgeConfig:
    """Short timeouts and backoff so fault tests stay quick; every loop still bounded by the real limits."""
    base = dict(url=url, model="test-judge", timeout_s=0.5, backoff_s=0.01, max_backoff_s=0.05, max_retries=2,
                max_reasks=1, concurrency=2, cache_path=str(tmp_path / "judge_cache.sqlite"))
    base.update(kw)
    return JudgeConfig(**base)
