"""Sibling-benchmark suites (WISE, GenExam, UniEval, PhyBench): the judge layer's protocol importers
turn each benchmark's public data into prompt-language prompts, so `vistar suite` lists and exports
them like the shipped suites. Their data is never shipped: it is read from a data folder, by default
`../shared/data` next to the source checkout (override with `--data-dir`)."""
from __future__ import annotations

from pathlib import Path

from ..prompts_dsl import Prompt
from .catalog import SuiteError, SuiteInfo


def default_data_dir() -> Path:
    """`<checkout>/../shared/data`, where the sibling benchmarks' public files sit beside the repository."""
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def protocols() -> dict:
    """The registered judge protocols by suite name; one whose module does not import here (the judge layer, or a
    plugin's own dependency, not installed) is left out, and the others stay usable."""
    from ..engine import registry

    found = {}
    for name in registry.PROTOCOLS:
        try:
            found[name] = registry.protocol(name)
        except ImportError:
            continue
    return found


def protocol_info(name: str, protocol) -> SuiteInfo:
    where = f"{protocol.data_subdir}/" if protocol.data_subdir else "its data folder"
    return SuiteInfo(name=name, version=str(protocol.version), origin="protocol",
                     description=f"sibling benchmark judged by the '{name}' protocol (public data: {where})")


def load_protocol(name: str, data_dir: str | Path | None = None) -> tuple[list[Prompt], list[str]]:
    """(prompts, problems) of a sibling benchmark; SuiteError when its data cannot be read at all."""
    table = protocols()
    if name not in table:
        raise SuiteError(f"unknown protocol suite '{name}'")
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    try:
        items = table[name].load_items(root)
    except (OSError, ValueError) as exc:  # missing folder/files, or the judge layer's DataError
        raise SuiteError(f"suite '{name}': cannot read its data under {root}: {exc} (give the folder with --data-dir)") from None
    return [item.to_prompt() for item in items], list(getattr(items, "problems", []))
