"""One entry point for every suite a user can name: shipped (`core`, `hard`, `full`), a sibling
benchmark's protocol suite, or a prompt file of their own (`.vistar` / `.jsonl`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..prompts_dsl import Prompt, read_prompts
from ..prompts_dsl.validate import as_issue
from .catalog import SuiteError, SuiteInfo, builtin_suites, load_builtin
from .protocols import load_protocol, protocol_info, protocols


@dataclass
class LoadedSuite:
    info: SuiteInfo
    prompts: list[Prompt]
    problems: list[str] = field(default_factory=list)  # records that could not be used; the rest still load


def list_suites() -> list[SuiteInfo]:
    """Shipped suites first, then the sibling-benchmark suites the judge layer knows."""
    return [*builtin_suites().values(), *(protocol_info(n, p) for n, p in protocols().items())]


def load_suite(name: str, data_dir: str | Path | None = None) -> LoadedSuite:
    builtin = builtin_suites()
    if name in builtin:
        return LoadedSuite(builtin[name], load_builtin(name))
    table = protocols()
    if name in table:
        prompts, problems = load_protocol(name, data_dir)
        return LoadedSuite(protocol_info(name, table[name]), prompts, problems)
    path = Path(name)
    if path.is_file():
        parsed = read_prompts(path)
        info = SuiteInfo(name=path.stem, version="-", description=str(path), origin="file")
        return LoadedSuite(info, parsed.prompts, [str(as_issue(e)) for e in parsed.errors])
    known = ", ".join(s.name for s in list_suites())
    raise SuiteError(f"unknown suite '{name}' and no such prompt file (suites: {known})")
