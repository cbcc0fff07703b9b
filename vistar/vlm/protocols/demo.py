"""The local demo judge's reading rules (vistar.vlm.testing_server), shared by the protocols' `demo_reply`:
answers are deterministic functions of the image's facts so tests can compute them independently.
- dominant colour: red/green/blue when that channel's mean exceeds both others by 40, else "gray";
- bright: mean intensity above 127;
- a yes/no question is yes iff it names the dominant colour; one naming no colour is yes iff the image is bright;
- a 0-N rubric score is N on a bright image, else 0."""
from __future__ import annotations

import re

COLOURS = ("red", "green", "blue")


def yes(question: str, dominant: str, bright: bool) -> bool:
    named = [c for c in (*COLOURS, "gray") if re.search(rf"\b{c}\b", question, re.I)]
    return dominant in named if named else bright


def level(top: int, bright: bool) -> int:
    return top if bright else 0
