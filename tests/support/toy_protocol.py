"""The toy protocol of docs/engine.md, "Adding a metric / a stage / a protocol": one module declaring a judge
protocol (its items, question, reply parser, score, aggregation, headline and the demo judge's reply), and,
for the tests that run it, a writer of its benchmark on disk."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.protocols.base import Items, Outcome, Protocol, Query, make_prompt
from vistar.vlm.protocols.demo import yes

NAME, VERSION = "toy-colours", "1"
SYSTEM = "You check the main colour of a picture."
USER = "Is the picture mostly {colour}? Reply yes or no."


@dataclass(frozen=True)
class ToyItem:
    id: str
    prompt: str
    colour: str

    def to_prompt(self):
        return make_prompt(self.id, "IL", "CUL", self.prompt, NAME)


def load_items(data_dir) -> Items:
    records = json.loads((Path(data_dir) / "toy.json").read_text())
    return Items(ToyItem(str(r["id"]), r["prompt"], r["colour"]) for r in records)


def write_benchmark(root: Path, colours: dict[str, str], image) -> tuple[Path, Path]:
    """For tests: the toy data (item id -> the colour it asks for, "a <colour> square") under ROOT/data and one
    model's images, each item drawn as IMAGE (an RGB array), under ROOT/images: (data folder, images folder)."""
    data, folder = root / "data", root / "images" / "m"
    data.mkdir(parents=True)
    folder.mkdir(parents=True)
    (data / "toy.json").write_text(json.dumps([{"id": i, "prompt": f"a {c} square", "colour": c} for i, c in colours.items()]))
    for item_id in colours:
        Image.fromarray(image).save(folder / f"{item_id}.png")
    return data, root / "images"


def parse(text: str) -> bool:
    word = text.strip().lower().rstrip(".")
    if word not in ("yes", "no"):
        raise ReplyFormatError(f"expected yes or no, got {text[:40]!r}")
    return word == "yes"


def queries(item: ToyItem, criteria=None, data_dir=None) -> list[Query]:
    return [Query("colour", USER.format(colour=item.colour), parse, SYSTEM)]


def score(outcome: Outcome) -> tuple[float, dict]:
    return float(outcome.answers["colour"]), {"colour": outcome.item.colour}


def aggregate(df, items=None) -> dict:
    ok = df[(df.metric == "toy.match") & (df.status == "ok")]
    return {model: {"match": float(g.score.mean()), "n": len(g)} for model, g in ok.groupby("model")}


def headline(numbers: dict) -> dict:
    return {"match": numbers["match"]}


def demo_reply(system: str, user: str, facts) -> str:
    return "yes" if yes(user, *facts) else "no"


PROTOCOL = Protocol(NAME, VERSION, {"toy.match": score}, (SYSTEM, USER), load_items, queries, aggregate, headline,
                    demo_reply, (SYSTEM,))
