"""The prompt suites: versioned `.vistar` files shipped in this package, listed in `suites.yaml`.

Suites are package data read through `importlib.resources`, so they work from a wheel or a zip as well
as from a source checkout. Sibling-benchmark suites (imported from their public data) are added by
`vistar.suites.protocols` when the judge layer and the data folder are present.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from ..prompts_dsl import Prompt, read_prompts
from ..prompts_dsl.validate import as_issue


class SuiteError(ValueError):
    """An unknown suite name, or a suite whose file does not parse."""


@dataclass(frozen=True)
class SuiteInfo:
    name: str
    version: str
    description: str
    files: tuple[str, ...] = ()
    origin: str = "builtin"  # "builtin", or "protocol" for an imported sibling benchmark


@lru_cache(maxsize=1)
def builtin_suites() -> dict[str, SuiteInfo]:
    data = yaml.safe_load(resources.files("vistar.suites").joinpath("suites.yaml").read_text(encoding="utf-8"))
    return {name: SuiteInfo(name=name, version=str(spec["version"]), description=spec["description"],
                            files=tuple(spec["files"])) for name, spec in data["suites"].items()}


def builtin_suite(name: str) -> SuiteInfo:
    suites = builtin_suites()
    if name not in suites:
        raise SuiteError(f"unknown suite '{name}' (known: {', '.join(suites)})")
    return suites[name]


def read_builtin_file(filename: str) -> list[Prompt]:
    """Prompts of one shipped file; any parse error is a packaging defect, so it raises."""
    resource = resources.files("vistar.suites").joinpath(filename)
    with resources.as_file(resource) as path:
        parsed = read_prompts(path)
    if parsed.errors:
        problems = "; ".join(str(as_issue(e)) for e in parsed.errors[:5])
        raise SuiteError(f"shipped suite file {filename} has {len(parsed.errors)} errors: {problems}")
    return parsed.prompts


def load_builtin(name: str) -> list[Prompt]:
    """All prompts of a shipped suite, in file order; ids are unique across the suite's files."""
    info = builtin_suite(name)
    prompts, seen = [], {}
    for filename in info.files:
        for prompt in read_builtin_file(filename):
            if prompt.id in seen:
                raise SuiteError(f"suite '{name}': duplicate id '{prompt.id}' in {filename} and {seen[prompt.id]}")
            seen[prompt.id] = filename
            prompts.append(prompt)
    return prompts
