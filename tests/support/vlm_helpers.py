"""Shared by the judge-layer tests: a fast-failing judge config and solid-colour test images."""
from __future__ import annotations

import numpy as np

from vistar.vlm.config import JudgeConfig
from vistar.vlm.hwpq import online
from vistar.vlm.images import image_sha256, png_bytes
from vistar.vlm.types import JudgeRequest

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


def is_it_red(rgb, item="q1", vote=0) -> JudgeRequest:
    """The HWPQ per-question request "Is the image red?" about a solid RGB image (the local judge answers by colour)."""
    image = solid(rgb)
    return JudgeRequest("hwpq@1", item, online.PER_QUESTION_HASH, online.per_question_prompt("Is the image red?"),
                        online.SYSTEM, (png_bytes(image),), image_sha256(image), vote)
