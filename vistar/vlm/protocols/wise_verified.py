"""WISE (verified prompts): one binary 0/1 judgement per image, the explanation used as the judging guide.

Categories by prompt id: culture 1–400, time 401–520, space 521–640, biology 641–760, physics 761–880,
chemistry 881–1000; overall = 0.40·culture + 0.12·(time + space + biology + physics + chemistry).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import ReplyFormatError
from ..replies import Reply, int_score
from ..types import WireFormat
from .base import Outcome, Protocol, Query
from .wise_common import Script, WiseItem, load_wise, summarize_wise, upstream_family, wise_headline

NAME, VERSION = "wise-verified", "1"
RANGES = [(1, 400, "culture"), (401, 520, "time"), (521, 640, "space"), (641, 760, "biology"),
          (761, 880, "physics"), (881, 1000, "chemistry")]
FILES = ["cultural_common_sense_verified.json", "spatio-temporal_reasoning_verified.json", "natural_science_verified.json"]
# the overall's category weights, as calculate_verified.py weighs them
WEIGHTS = {"culture": 0.40, "time": 0.12, "space": 0.12, "biology": 0.12, "physics": 0.12, "chemistry": 0.12}

SYSTEM = ("You are an impartial expert judge of text-to-image generation. You decide whether a generated image "
          "shows what its prompt asks for, using the judging guide as the definition of a correct image.")
USER = """Prompt: {prompt}
Judging guide (what a correct image must show): {explanation}

Give score 1 only if the image clearly shows every element the judging guide requires and nothing in it
contradicts the guide; otherwise give score 0.
Reply with only a JSON object: {{"score": 0 or 1, "reason": "<one sentence>"}}"""


def parse(text: str) -> dict:
    reply = Reply(text)
    reason = reply.obj.get("reason") if reply.obj else None
    return {"score": int_score(reply, "score", 0, 1), "reason": reason if isinstance(reason, str) else ""}


def load_items(data_dir: str | Path):
    root = PROTOCOL.data_root(data_dir)
    return load_wise([root / "data_verified", root], FILES, RANGES, NAME, union="merge.json")


def queries(item: WiseItem, criteria=None, data_dir=None) -> list[Query]:
    return [Query("binary", USER.format(prompt=item.prompt, explanation=item.explanation), parse, SYSTEM)]


def score(outcome: Outcome) -> tuple[float, dict]:
    answer = outcome.answers.get("binary")
    if not isinstance(answer, dict):
        raise ReplyFormatError("no binary answer")
    return float(answer["score"]), {"reason": answer["reason"], "category": outcome.item.category}


def summarize(df, items=None) -> dict:
    return summarize_wise(df, "wiscore.verified", WEIGHTS)


def _strip_think(content: str) -> str:
    """vllm_eval.py's cleanup of a reply before reading it."""
    content = re.sub(r"<think>.*?</think>\s*", "", content, flags=re.DOTALL)
    content = re.sub(r"</think>\s*", "", content)
    return content.strip()


UPSTREAM = Script("vllm_eval.py", "_chat_completion_via_vllm", "binary", ("score",),
                  lambda scores: {"score": int(scores["score"]), "reason": ""},
                  WireFormat(image_mime="image/png", attempts=3, clean=_strip_think,
                             body=(("temperature", 0.0), ("max_tokens", 500), ("chat_template_kwargs", {"enable_thinking": False}))))


def demo_reply(system: str, user: str, facts) -> str:
    bright = facts[1]
    return json.dumps({"score": int(bright), "reason": "bright" if bright else "dark"})


PROTOCOL = Protocol(NAME, VERSION, {"wiscore.verified": score}, (SYSTEM, USER), load_items, queries, summarize,
                    wise_headline, demo_reply, (SYSTEM,), data_subdir="WISE", upstream=upstream_family(UPSTREAM))
