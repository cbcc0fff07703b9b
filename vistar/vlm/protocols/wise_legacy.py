"""WISE (legacy prompts): three 0–2 rubric scores per image, WiScore = (0.7·C + 0.2·R + 0.1·A) / 2.

Categories by prompt id: culture 1–400, time 401–567, space 568–700, biology 701–800, physics 801–900,
chemistry 901–1000; overall = 0.4·culture + 0.167·time + 0.133·space + 0.1·(biology + physics + chemistry).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import ReplyFormatError
from ..replies import Reply, int_score
from ..types import WireFormat
from .base import Outcome, Protocol, Query
from .demo import level
from .wise_common import Script, WiseItem, load_wise, summarize_wise, upstream_family, wise_headline

NAME, VERSION = "wise-legacy", "1"
RANGES = [(1, 400, "culture"), (401, 567, "time"), (568, 700, "space"), (701, 800, "biology"),
          (801, 900, "physics"), (901, 1000, "chemistry")]
FILES = ["cultural_common_sense.json", "spatio-temporal_reasoning.json", "natural_science.json"]
# the overall's category weights, as WISE_legacy/Calculate.py weighs them
WEIGHTS = {"culture": 0.4, "time": 0.167, "space": 0.133, "biology": 0.1, "physics": 0.1, "chemistry": 0.1}

SYSTEM = ("You are an impartial expert judge of text-to-image generation. You compare a generated image with "
          "the prompt it came from and with an explanation of what a model with the right world knowledge "
          "should have drawn.")
USER = """Prompt: {prompt}
What the image should show: {explanation}

Rate the image on three criteria, each an integer 0, 1 or 2:
- consistency: 2 = shows everything the explanation requires; 1 = shows part of it or with errors; 0 = does not show it.
- realism: 2 = realistic and physically plausible for its style; 1 = noticeable flaws; 0 = severe flaws.
- aesthetic_quality: 2 = well composed and pleasing; 1 = acceptable; 0 = poor.
Reply with only a JSON object: {{"consistency": 0-2, "realism": 0-2, "aesthetic_quality": 0-2}}"""


def parse(text: str) -> dict:
    reply = Reply(text)  # also the benchmark's own "Consistency: 2 / Realism: 1 / Aesthetic Quality: 0" lines
    return {"consistency": int_score(reply, "consistency", 0, 2),
            "realism": int_score(reply, "realism", 0, 2),
            "aesthetic_quality": int_score(reply, "aesthetic_quality", 0, 2, aliases=("aesthetic", "aesthetics"))}


def wiscore(consistency: int, realism: int, aesthetic_quality: int) -> float:
    return (0.7 * consistency + 0.2 * realism + 0.1 * aesthetic_quality) / 2


def raw_wiscore(details: dict, score: float) -> float:
    """The image's WiScore from the answers its row keeps, unclamped: the benchmark's extract_scores takes any
    digit and Calculate.py averages the WiScore as it is (`Consistency: 7` gives 2.6), while a row's score is
    held to [0, 1]. A row without the three answers counts its score."""
    if not all(isinstance(details.get(k), (int, float)) for k in ("consistency", "realism", "aesthetic_quality")):
        return score
    return wiscore(details["consistency"], details["realism"], details["aesthetic_quality"])


def load_items(data_dir: str | Path):
    root = PROTOCOL.data_root(data_dir)
    return load_wise([root / "WISE_legacy" / "data", root / "data", root], FILES, RANGES, NAME)


def queries(item: WiseItem, criteria=None, data_dir=None) -> list[Query]:
    return [Query("rubric", USER.format(prompt=item.prompt, explanation=item.explanation), parse, SYSTEM)]


def score(outcome: Outcome) -> tuple[float, dict]:
    rubric = outcome.answers.get("rubric")
    if not isinstance(rubric, dict):
        raise ReplyFormatError("no rubric answer")
    return wiscore(**rubric), {**rubric, "category": outcome.item.category}


def summarize(df, items=None) -> dict:
    return summarize_wise(df, "wiscore.legacy", WEIGHTS, value=raw_wiscore)


RUBRIC = ("consistency", "realism", "aesthetic_quality")
UPSTREAM = Script("WISE_legacy/gpt_eval.py", "evaluate_image", "rubric", RUBRIC, lambda scores: {k: scores[k] for k in RUBRIC},
                  WireFormat(image_mime="image/png", attempts=3, body=(("temperature", 0.0), ("max_tokens", 2000))))


def demo_reply(system: str, user: str, facts) -> str:
    return json.dumps({"consistency": level(2, facts[1]), "realism": level(2, facts[1]), "aesthetic_quality": 1})


PROTOCOL = Protocol(NAME, VERSION, {"wiscore.legacy": score}, (SYSTEM, USER), load_items, queries, summarize,
                    wise_headline, demo_reply, (SYSTEM,), data_subdir="WISE", upstream=upstream_family(UPSTREAM))
