"""Typed judge request and reply: what is asked, what identifies it in the cache, and what came back."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable


def text_hash(*parts: str) -> str:
    """Short stable hash of prompt-template text (part of every cache key)."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class WireFormat:
    """How a request goes on the wire when it must be the one a benchmark's own script sends: content as
    parts, the image's MIME label and detail, the script's decoding fields, and its retry rule."""

    system_parts: bool = True                      # system content as [{"type": "text", ...}]
    image_mime: str | None = "image/png"          # None: the image bytes' own type
    image_detail: str | None = None                # e.g. "high"
    body: tuple[tuple[str, object], ...] = ()      # the script's decoding fields, e.g. (("temperature", 0.0),)
    attempts: int = 1                              # the script's tries for an unparseable reply (same messages)
    clean: Callable[[str], str] | None = None      # what the script does to the reply text before parsing it


@dataclass(frozen=True)
class JudgeRequest:
    """One question to the judge. `protocol`, `template_hash`, `image_sha256` and `item_id` (which includes the
    vote index) are the cache identity together with the judge model and decoding parameters."""

    protocol: str                  # "<name>@<version>", e.g. "wise-verified@1" or "hwpq@1"
    item_id: str                   # item / question id, unique within the protocol, vote index included
    template_hash: str
    user: str
    system: str = ""
    images: tuple[bytes, ...] = ()  # encoded images (PNG, or a reference image's own file), sent after the text
    image_sha256: str = ""          # identity of the scored image ("" for text-only questions)
    vote: int = 0                   # independent query index; the seed is offset by it
    max_tokens: int | None = None   # None: the judge config's default
    # True only where `template_hash` and `item_id` alone fix `system` and `user` (HWPQ: the questionnaire hash
    # or prompt fingerprint is in the id) and the text is still rendered as when older vistar versions wrote
    # the cache: an answer stored under the key without the text hash (cache.legacy_key) answered this text
    text_fixed_by_id: bool = False
    wire: WireFormat | None = None  # an upstream-exact request (protocols/upstream_*.py); None: vistar's own format


Parser = Callable[[str], Any]  # raises ReplyFormatError on a malformed reply


@dataclass
class JudgeReply:
    ok: bool
    text: str | None = None
    parsed: Any = None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    attempts: int = 0              # HTTP requests made (retries and re-asks included)
    reasks: int = 0
    cached: bool = False
    meta: dict = field(default_factory=dict)
