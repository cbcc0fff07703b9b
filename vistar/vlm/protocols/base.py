"""What every sibling-benchmark protocol provides: versioned importer, prompt templates, reply parser, score
formula, aggregation, and (when its benchmark publishes its judge code) the family of the benchmark's own
questions. Everything here is pure (no I/O beyond reading the benchmark's own data files)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ...prompts_dsl.model import Prompt
from ..errors import DataError
from ..types import Parser, WireFormat, text_hash
from .upstream_source import UPSTREAMS


@dataclass(frozen=True)
class Query:
    """One question about one image (or, with `with_image=False`, a text-only question about the item)."""

    qid: str
    user: str
    parse: Parser
    system: str = ""
    with_image: bool = True
    extra_images: tuple[bytes, ...] = ()   # e.g. GenExam's ground-truth image, sent after the scored one
    max_tokens: int | None = None
    wire: WireFormat | None = None           # upstream-exact request format (a protocol's upstream Family)
    # how the scored image is sent, from its pixels and its file (None: a PNG of the pixels at the judge's max side)
    encode: Callable[[Any, Path | None], bytes] | None = None


@dataclass
class Outcome:
    """The judge's parsed answers about one image under one protocol: the feature the protocol metrics read."""

    protocol: str
    item: Any
    answers: dict[str, Any]
    context: dict = field(default_factory=dict)   # e.g. the PhyBench criteria the judge was given


class Items(list):
    """Loaded items plus the records that could not be used (file, record, field, reason)."""

    def __init__(self, items=(), problems=()):
        super().__init__(items)
        self.problems: list[str] = list(problems)


UPSTREAM_TEMPLATE = "upstream"  # the prompt control value (`template="upstream"`) that asks for a Family's questions


@dataclass(frozen=True)
class Family:
    """The benchmark's own questions for one protocol, built from the pinned pieces of the user's checkout of
    its repository (upstream_source): `ask(folder, item, criteria, extra)` builds an item's questions from the
    checkout FOLDER (`extra`: what the protocol's `extra_inputs` read), `criteria(folder, item)` its text-only
    first question, if it has one. Scores from these are comparable with the benchmark's published tables."""

    upstream: str       # UPSTREAMS key
    ask: Callable[[str, Any, Any, dict], list[Query]]
    criteria: Callable[[str, Any], Query | None] = lambda folder, item: None
    note: str = ""      # what the upstream script leaves open and vistar fills

    @property
    def label(self) -> str:
        return UPSTREAMS[self.upstream].label

    @property
    def version(self) -> str:
        return f"upstream-{UPSTREAMS[self.upstream].commit[:7]}"

    def template_hash(self) -> str:
        return text_hash(*UPSTREAMS[self.upstream].pins.values())

    def queries(self, folder: str | Path, item, criteria=None, **extra) -> list[Query]:
        """The item's questions as the benchmark's script asks them (`extra`: e.g. GenExam's `ground_truth` image)."""
        return self.ask(str(folder), item, criteria, extra)

    def criteria_query(self, folder: str | Path, item) -> Query | None:
        return self.criteria(str(folder), item)


def vistar_label(suite: str, version: str) -> str:
    """The template family of vistar's own questions, as run.json and the summary name it."""
    return f"vistar-{suite}-{version}: not comparable with published tables"


Score = Callable[[Outcome], tuple[float, dict]]  # a metric's value and details from the judge's outcome
Facts = tuple[str, bool]  # the demo judge's reading of the image: dominant colour, bright (testing_server)


@dataclass(frozen=True)
class Protocol:
    """Everything about one sibling benchmark, declared once: the registry routes its prompts to `scores`'
    metrics, the judge stage (`stage.make_stage`, built from this declaration) asks `queries`, `vistar score
    --suite` prints `headline(aggregate(rows))`, and the local demo judge answers its questions with
    `demo_reply`. A declaration missing a part fails at import. With `--upstream`, the benchmark's own questions
    come from its `upstream` family, given what `extra_inputs` reads."""

    name: str                        # suite name, e.g. "wise-verified"
    version: str                     # of the judge questions (part of every judge cache key)
    scores: dict[str, Score]         # metric name -> its score function; each becomes an engine metric
    templates: tuple[str, ...]       # template texts; their hash is part of every cache key
    load_items: Callable[[Path], Items]
    queries: Callable[..., list[Query]]            # (item, criteria=None, data_dir=None) -> queries
    aggregate: Callable[..., dict]                 # (scores DataFrame, items or None) -> {model: numbers}
    headline: Callable[[dict], dict]               # one model's numbers -> the few printed after a run
    demo_reply: Callable[[str, str, Facts], str]   # (system, user text, facts) -> the local judge's reply
    systems: tuple[str, ...]                       # the system prompts its queries send (the demo judge's key)
    criteria: Callable[[Any], Query | None] = lambda item: None  # optional text-only stage 1 (PhyBench)
    data_subdir: str = ""            # folder name under a shared data root, e.g. "WISE"
    layout: str = "IMAGES/<model>/<prompt_id>.png"
    metric_version: str = ""         # scoring changed while the questions did not: only this moves ("" = version)
    # inputs besides the item that the benchmark's own (upstream) questions send, read from its data folder:
    # (item, data folder) -> keyword arguments of `upstream.queries`, e.g. GenExam's reference image
    extra_inputs: Callable[[Any, Path], dict] = lambda item, data_dir: {}
    upstream: Family | None = None   # the benchmark's own questions (`--upstream`), when it publishes its judge code

    def __post_init__(self):
        missing = [f for f in ("scores", "templates", "systems") if not getattr(self, f)]
        missing += [f for f in ("load_items", "queries", "aggregate", "headline", "demo_reply")
                    if not callable(getattr(self, f))]
        if missing:
            raise TypeError(f"protocol '{self.name}' declares no {', '.join(missing)}")

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self.scores)

    @property
    def stage(self) -> str:
        return f"judge.{self.name}"

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def template_hash(self) -> str:
        return text_hash(*self.templates)

    def data_root(self, data_dir: str | Path) -> Path:
        """Accept either the benchmark's folder or a shared root that contains it."""
        root = Path(data_dir).expanduser()
        if self.data_subdir and (root / self.data_subdir).is_dir():
            return root / self.data_subdir
        return root


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None


def read_json_list(path: Path, problems: list[str], what: str) -> list | None:
    """A data file's JSON list, or None with a problem recorded (one bad file of several skips only itself)."""
    try:
        data = read_json(path)
    except DataError as exc:
        problems.append(f"{exc}; file skipped")
        return None
    if not isinstance(data, list):
        problems.append(f"{path}: expected a JSON list of {what}; file skipped")
        return None
    return data


def one_line(text: str) -> str:
    """Prompt cores are single-line in the prompt language."""
    return " ".join(str(text).split())


def make_prompt(item_id: str, role: str, angle: str, core: str, protocol: str, **metadata) -> Prompt:
    return Prompt(role=role, angle=angle, core=one_line(core), controls={"protocol": protocol, "item": item_id},
                  id=item_id, metadata={k: v for k, v in metadata.items() if v is not None})
