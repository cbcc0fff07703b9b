"""Safety screen for prompt suites: a documented word list, plus any learned text classifier.

A screen returns `Flag`s (prompt id, what matched, category, which screen); the shipped suites must
produce none. The word list (`blocklist.yaml`) matches whole tokens, so "Sussex" never trips "sex".
A learned classifier (e.g. Detoxify) plugs in through the `TextClassifier` protocol: anything with a
`name` and `predict(texts) -> list[dict[label, probability]]`; `ClassifierScreen` thresholds it.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Iterable, Protocol

import yaml

from ..models.errors import MissingWeightError
from ..prompts_dsl import Prompt
from .stats import tokenize


@dataclass(frozen=True)
class Flag:
    prompt_id: str
    match: str      # the list entry, or the classifier label
    category: str
    screen: str     # "wordlist" or "classifier:<name>"
    score: float = 1.0


def prompt_texts(prompt: Prompt) -> list[str]:
    """What a screen reads: the core and every string control value (text to render, sub-prompts, ...)."""
    texts = [prompt.core]
    for value in prompt.controls.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                texts.append(item)
    return texts


class WordListScreen:
    """Whole-token matcher over categorised terms; `term*` matches any token starting with `term`."""

    name = "wordlist"

    def __init__(self, categories: dict[str, list[str]]):
        self.entries: list[tuple[tuple[str, ...], bool, str, str]] = []
        for category, terms in categories.items():
            for term in terms:
                prefix = term.endswith("*")
                words = tuple(tokenize(term.rstrip("*")))
                if words:
                    self.entries.append((words, prefix, category, term))

    @classmethod
    def default(cls) -> "WordListScreen":
        return cls(cls._default_categories())

    @classmethod
    def from_files(cls, paths: Iterable[str | Path], include_default: bool = True) -> "WordListScreen":
        categories = dict(cls._default_categories()) if include_default else {}
        for path in paths:
            for category, terms in _load_categories(Path(path).read_text(encoding="utf-8"), str(path)).items():
                categories[category] = [*categories.get(category, []), *terms]
        return cls(categories)

    @staticmethod
    def _default_categories() -> dict[str, list[str]]:
        return _load_categories(resources.files("vistar.suites").joinpath("blocklist.yaml").read_text(encoding="utf-8"), "blocklist.yaml")

    def matches(self, text: str) -> list[tuple[str, str]]:
        """(entry, category) for every list entry found in `text`."""
        tokens = tokenize(text)
        found = []
        for words, prefix, category, term in self.entries:
            n = len(words)
            for start in range(len(tokens) - n + 1):
                window = tokens[start:start + n]
                head_ok = window[:-1] == list(words[:-1])
                last_ok = window[-1].startswith(words[-1]) if prefix else window[-1] == words[-1]
                if head_ok and last_ok:
                    found.append((term, category))
                    break
        return found

    def screen(self, prompts: list[Prompt]) -> list[Flag]:
        flags = []
        for i, prompt in enumerate(prompts):
            seen = set()
            for text in prompt_texts(prompt):
                for term, category in self.matches(text):
                    if term not in seen:
                        seen.add(term)
                        flags.append(Flag(prompt.id or str(i), term, category, self.name))
        return flags


def _load_categories(text: str, where: str) -> dict[str, list[str]]:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{where}: not YAML: {exc}") from None
    categories = data.get("categories") if isinstance(data, dict) else None
    if not isinstance(categories, dict) or not all(isinstance(v, list) for v in categories.values()):
        raise ValueError(f"{where}: expected a mapping 'categories: {{name: [term, ...]}}'")
    return {str(k): [str(t) for t in v] for k, v in categories.items()}


class TextClassifier(Protocol):
    name: str

    def predict(self, texts: list[str]) -> list[dict[str, float]]:
        """One {label: probability} per text."""


class ClassifierScreen:
    """Flags a prompt when any label of any of its texts reaches `threshold`."""

    def __init__(self, classifier: TextClassifier, threshold: float = 0.5, batch_size: int = 64):
        self.classifier, self.threshold, self.batch_size = classifier, threshold, batch_size
        self.name = f"classifier:{classifier.name}"

    def screen(self, prompts: list[Prompt]) -> list[Flag]:
        owners, texts = [], []
        for i, prompt in enumerate(prompts):
            for text in prompt_texts(prompt):
                owners.append(prompt.id or str(i))
                texts.append(text)
        worst: dict[tuple[str, str], float] = {}
        for start in range(0, len(texts), self.batch_size):
            scores = self.classifier.predict(texts[start:start + self.batch_size])
            for owner, labels in zip(owners[start:start + self.batch_size], scores):
                for label, value in labels.items():
                    if value >= self.threshold:
                        worst[(owner, label)] = max(value, worst.get((owner, label), 0.0))
        return [Flag(pid, label, label, self.name, score) for (pid, label), score in worst.items()]


class DetoxifyClassifier:
    """Detoxify (Unitary, Apache-2.0) through its own package; weights come from the model layer.

    Needs `pip install detoxify` and the checkpoint on disk (`vistar models fetch detoxify-original`,
    or `--model-path detoxify-original=FILE`); Detoxify also reads its transformers tokenizer/config,
    which must be in the Hugging Face cache or given as `huggingface_config_path`.
    """

    name = "detoxify"

    def __init__(self, checkpoint: str | Path, model_type: str = "original", huggingface_config_path: str | None = None, device: str = "cpu"):
        try:
            from detoxify import Detoxify
        except ImportError:
            raise MissingWeightError("detoxify-original", "the `detoxify` package is not installed: pip install detoxify") from None
        checkpoint = Path(checkpoint)
        if checkpoint.is_dir():
            found = sorted(checkpoint.glob("*.ckpt"))
            if not found:
                raise MissingWeightError("detoxify-original", f"no *.ckpt file in {checkpoint}")
            checkpoint = found[0]
        self._model = Detoxify(model_type, checkpoint=str(checkpoint), device=device, huggingface_config_path=huggingface_config_path)

    def predict(self, texts: list[str]) -> list[dict[str, float]]:
        result = self._model.predict(list(texts))  # {label: [score per text]}
        return [{label: float(values[i]) for label, values in result.items()} for i in range(len(texts))]
