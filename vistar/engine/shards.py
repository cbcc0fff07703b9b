"""`vistar score --shard K/N`: split one image folder across N independent runs (machines, GPUs, array jobs).

An image belongs to shard 1 + sha256(its relative path) mod N. Why a hash of the path rather than a slice of
the sorted list: adding images to the folder later never moves an existing image to another shard, so every
shard's run folder can be resumed as it is. Each shard reports the problems of the whole prompt file and
folder (its log stands alone); `vistar merge` keeps each problem once.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from .images import ImageRecord


@dataclass(frozen=True)
class Shard:
    index: int   # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def record(self) -> dict[str, int]:
        """As run.json holds it."""
        return {"index": self.index, "count": self.count}

    def owns(self, image: str) -> bool:
        """Whether this shard scores the image at this relative path (the `image` column)."""
        return shard_of(image, self.count) == self.index


def label(record: dict[str, Any] | None) -> str | None:
    """'K/N' for a run.json `shard` record, None for an unsharded run."""
    return f"{record['index']}/{record['count']}" if record else None


def shard_of(image: str, count: int) -> int:
    digest = hashlib.sha256(image.encode("utf-8")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str) -> Shard:
    """'K/N' with 1 <= K <= N, e.g. '3/8' (the form SLURM array jobs make easy: $SLURM_ARRAY_TASK_ID/8)."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match:
        raise ValueError(f"--shard must look like K/N (e.g. 2/8), got {text!r}")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"--shard {text}: need 1 <= K <= N")
    return Shard(index, count)


def select(shard: Shard | None, records: list[ImageRecord]) -> list[ImageRecord]:
    """The image records this shard scores (all of them without a shard).

    A manifest may list images outside IMAGES by absolute path; machines that mount them elsewhere would
    disagree on which shard owns them, so sharding refuses them."""
    if shard is None:
        return list(records)
    outside = [rec.rel for rec in records if rec.rel.startswith("/")]
    if outside:
        raise ValueError(f"--shard needs every image inside IMAGES (the manifest gives {outside[0]} and "
                         f"{len(outside) - 1} more by absolute path): give them relative to IMAGES")
    return [rec for rec in records if shard.owns(rec.rel)]


def folder_digest(records: list[ImageRecord]) -> str:
    """What the whole (unsharded) work list was: shards of one split must agree on it, or the folder or the
    prompts changed between shard runs and their union would cover some images twice or never."""
    digest = hashlib.sha256()
    for rec in sorted(records, key=lambda r: (r.model, r.prompt_id, r.sample, r.rel)):
        digest.update(f"{rec.model}\0{rec.prompt_id}\0{rec.sample}\0{rec.rel}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()

