"""What a feature stage is: a named, versioned, batched function of images (one output per image), and the
run-wide context every stage receives."""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Protocol, TypeVar

import numpy as np

from .params import parse

P = TypeVar("P")
ModelScale = Literal["full", "tiny"]   # the size of random-init stand-ins (vistar.models.random_init)
DEFAULT_SEED = 0


@dataclass
class StageInput:
    """One image as a feature stage sees it."""

    image: np.ndarray             # HxWx3 uint8 RGB
    prompt: Any                   # the prompt-language `Prompt` (vistar.prompts_dsl.model)
    controls: dict[str, Any]                # resolved control parameters (ground truth)
    deps: dict[str, Any] = field(default_factory=dict)  # outputs of the stages this one requires
    # the file the pixels were decoded from (None: an image from memory); a judge that must send the file as a
    # benchmark's own script does (`--upstream`) reads it, every other stage reads `image`
    source: Path | None = None


class JudgeSettings(Protocol):
    """What the engine reads of the judge's settings (`vistar.vlm.config.JudgeConfig`, which the judge layer owns)."""

    @property
    def key_env(self) -> str | None: ...   # the environment variable holding the API key (its name, never the key)


@dataclass(frozen=True)
class RunOptions:
    """Run-time settings from the command line that stages read (their parameters come from the ontology)."""

    seed: int = DEFAULT_SEED           # torch's seed, and the random-init stand-ins' (`vistar bench --random-init`)
    random_init: bool = False          # `vistar bench --random-init`: a missing weight becomes a random-init model
    # `vistar bench --model-scale tiny`: small random-init variants replace every catalogued model, weights or not
    model_scale: ModelScale = "full"
    judge: JudgeSettings | None = None   # the VLM judge (`--judge-url`, `--judge-model`, `--judge-config`, ...)
    hwpq_dir: str | None = None        # the HWPQ questionnaires' folder (`--hwpq-dir`)
    data_dir: str | None = None        # a judge protocol's public data folder (`--data-dir`)
    upstream_dir: str | None = None    # a checkout of a benchmark's repository (`--upstream`)
    # {protocol name: its items}, loaded once by a `--suite` run and shipped to every scoring process
    benchmark_items: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.model_scale not in typing.get_args(ModelScale):   # what the type says, for callers the checker misses
            raise ValueError(f"model_scale must be one of {', '.join(map(repr, typing.get_args(ModelScale)))}, "
                             f"not {self.model_scale!r}")


@dataclass
class StageContext:
    """Run-wide settings and the cache of loaded models shared by all batches."""

    device: str = "cpu"
    model_paths: dict[str, str] = field(default_factory=dict)
    features: dict[str, Any] = field(default_factory=dict)    # ontology `features:` section: each stage's block
    options: RunOptions = field(default_factory=RunOptions)
    judge_ledger: Any = None     # the judge's calls and cost (vistar.vlm.prices.Ledger), summed over the run
    stage_devices: dict[str, str] = field(default_factory=dict)   # where a stage said it ran (runtime.device.ran_on)
    cache: dict[str, Any] = field(default_factory=dict)           # loaded models, by key (`model`); per-run tokens

    def params(self, stage: str, kind: type[P]) -> P:
        """`features.<stage>` parsed into the stage's parameter dataclass (checked when the run was planned)."""
        return parse(kind, self.features.get(stage), f"features.{stage}")

    def model(self, key: str, loader: Callable[[], Any]) -> Any:
        """Load once per run, reuse for every batch."""
        if key not in self.cache:
            self.cache[key] = loader()
        return self.cache[key]


@dataclass(frozen=True)
class FeatureStage:
    name: str
    version: str
    compute: Callable[[list[StageInput], StageContext], list[Any]]  # one output per input; an Exception marks a per-image failure
    requires: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    # the frozen dataclass `features.<name>` is parsed into (vistar.api.params), checked when the run is planned;
    # None: the stage reads no parameters
    params: type[Any] | None = None
    # the torch modules whose forward passes are "the model" once the stage has run in CTX: `vistar bench` times
    # the stage's wall time outside them as host work and replays their calls alone (None: no torch model)
    model_modules: Callable[[StageContext], list[Any]] | None = None
    # the raw `features.<name>` block as it takes effect on a device, for row keys (e.g. `provider: auto` as the
    # provider it picks there); None: the block is hashed as written
    key_params: Callable[[dict[str, Any], str], dict[str, Any]] | None = None
