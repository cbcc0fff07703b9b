"""Slow fake decoding and a slow fake stage that log when they ran, for the prefetch overlap tests.

Decode functions run in worker processes, which do not see this process's monkeypatches or later
environment changes, so they take everything from the image path: the log sits next to the image folders.
Timestamps are `time.monotonic()`, one clock for all processes of the machine (Linux CLOCK_MONOTONIC).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from vistar.api import FeatureStage, Metric, MetricResult
from vistar.engine.prefetch import decode_image

DECODE_SLEEP = 0.2   # seconds per image
STAGE_SLEEP = 0.2    # seconds per image
STAGE_LOG: list[tuple[float, float, int]] = []  # (start, end, images) of each stage call


def decode_log(image: Path) -> Path:
    return Path(image).parents[1] / "decode.log"


def slow_decode(path, max_pixels):
    start = time.monotonic()
    time.sleep(DECODE_SLEEP)
    out = decode_image(path, max_pixels)
    with open(decode_log(path), "a") as fh:
        fh.write(f"{start} {time.monotonic()} {os.getpid()}\n")
    return out


def dying_decode(path, max_pixels):
    """Kills its worker process on images named `*kill*`, as the kernel's OOM killer would."""
    if "kill" in Path(path).name:
        os._exit(1)
    return decode_image(path, max_pixels)


def _slow_stage(batch, ctx):
    start = time.monotonic()
    time.sleep(STAGE_SLEEP * len(batch))
    STAGE_LOG.append((start, time.monotonic(), len(batch)))
    return [float(item.image.mean()) for item in batch]


STAGE = FeatureStage(name="slow_mean", version="1", compute=_slow_stage)
METRIC = Metric(name="TR", angle="TR", version="1", features=("slow_mean",),
                fn=lambda f, c, p, pr: MetricResult.ok(f["slow_mean"] / 255.0))


def install(monkeypatch) -> None:
    from vistar.engine import registry

    monkeypatch.setattr(registry, "FEATURES", {"slow_mean": "tests.support.pipeline_helpers:STAGE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.support.pipeline_helpers:METRIC"})
    STAGE_LOG.clear()
