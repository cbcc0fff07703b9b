"""What a `vistar score` run needs from the judge layer: the judge's run options, a benchmark suite's prompt
file and items (loaded once, here, for the whole run), what run.json records about the suite, and the end-of-run
cost and benchmark reports. The command itself only forwards its options (vistar/cli/judge_options.py)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..api import RunOptions
from ..atomic import write_text_atomic
from ..suites.catalog import builtin_suites
from .config import config_from_options
from .prices import Ledger
from .protocols import protocol
from .protocols.aggregate import summarize
from .protocols.base import UPSTREAM_TEMPLATE, Family, vistar_label
from .protocols.upstream_source import UPSTREAMS, verified_source

ITEMS = "benchmark_items"  # run option: {protocol name: its Items}, loaded once by the run


def judge_options(url, model, key_env, mode, config, cache_only, hwpq_dir, data_dir, upstream=None) -> dict:
    """Run options for the judge stages; the ledger collects calls and cost for the end-of-run report."""
    options = {"judge_url": url, "judge_model": model, "judge_key_env": key_env, "judge_mode": mode,
               "judge_config": str(config) if config else None, "judge_cache_only": True if cache_only else None,
               "hwpq_dir": str(hwpq_dir) if hwpq_dir else None, "data_dir": str(data_dir) if data_dir else None,
               "upstream_dir": str(upstream) if upstream else None}
    options = {k: v for k, v in options.items() if v is not None}
    cfg = config_from_options(options)  # fail early on a bad setting, before any image is read
    if cfg is not None and cfg.key_env and not cfg.api_key:
        raise ValueError(f"--judge-key-env {cfg.key_env}: that environment variable is not set")
    options["judge_ledger"] = Ledger()
    return options


def run_options(options: dict) -> RunOptions:
    """The run's typed options from `judge_options`' mapping (its settings checked there already), with the
    benchmark items `prepare_suite` loaded."""
    return RunOptions(judge=config_from_options(options), hwpq_dir=options.get("hwpq_dir"),
                      data_dir=options.get("data_dir"), upstream_dir=options.get("upstream_dir"),
                      benchmark_items=options.get(ITEMS) or {})


@dataclass
class Suite:
    """A suite made ready for a run: its prompt file in the run folder, the records that could not be imported,
    and what run.json records about it."""

    prompts: Path
    problems: list[str]
    recorded: dict


def prepare_suite(name: str, data_dir: Path | None, out_dir: Path, upstream: Path | None, options: dict) -> Suite:
    """Write the suite's prompts (a shipped suite, or a protocol's imported items) as a prompt file in the run
    directory, so the run records exactly what it scored. A protocol's items are loaded here, once, and kept in
    `options` for the judge stage of every scoring process and for the summary. With `upstream` (a checkout of
    the benchmark's repository, checked here against the pinned pieces) every prompt carries
    `template="upstream"`, so its rows are never mixed with rows judged by vistar's own templates."""
    from ..prompts_dsl.parser import serialize_prompt
    from ..suites import load_builtin
    from ..suites.export import render

    if name in builtin_suites():
        if upstream is not None:
            raise ValueError(f"--upstream is for the benchmark suites, not the shipped suite '{name}'")
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"suite-{name}.vistar"
        write_text_atomic(path, render(load_builtin(name), "vistar"))
        return Suite(path, [], {})
    proto = protocol(name)
    if data_dir is None:
        raise ValueError(f"--suite {name} needs --data-dir (the benchmark's public data folder)")
    if upstream is not None:
        check_upstream(name, upstream)
    items = proto.load_items(data_dir)
    options[ITEMS] = {name: items}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"suite-{name}.jsonl"
    prompts = [item.to_prompt() for item in items]
    if upstream is not None:
        for p in prompts:
            p.controls["template"] = UPSTREAM_TEMPLATE
    lines = [json.dumps({"id": p.id, "prompt": serialize_prompt(p), **p.metadata}, ensure_ascii=False) for p in prompts]
    write_text_atomic(path, "".join(line + "\n" for line in lines))
    return Suite(path, list(items.problems), {"judge_templates": {name: template_family(name, options)}})


def after_run(out_dir: Path, options: dict, suite: str | None, echo) -> None:
    """Print and save the judge's usage and cost, and the protocol's benchmark-level summary."""
    ledger: Ledger | None = options.get("judge_ledger")
    if ledger is not None and (ledger.calls or ledger.cache_hits or ledger.failures):
        for line in ledger.lines():
            echo(line)
        cfg = config_from_options(options)
        _write(out_dir / "judge_usage.json", {**ledger.summary(), "judge": cfg.public() if cfg else None})
    if suite and suite not in builtin_suites():  # protocols have benchmark-level numbers; shipped suites use `report`
        from ..engine.store import read_scores

        family = template_family(suite, options)
        summary = summarize(suite, read_scores(out_dir), (options.get(ITEMS) or {}).get(suite))
        _write(out_dir / f"summary-{suite}.json", {**summary, "template_family": family})
        echo(f"{suite}: judged with {family}")
        for model, numbers in sorted(summary.items()):
            echo(f"{suite} {model}: {json.dumps(protocol(suite).headline(numbers))}")


def check_upstream(name: str, folder: Path) -> None:
    """Refuse a checkout that lacks a pinned piece or holds another version of it, before any image is judged."""
    upstream = UPSTREAMS[_family(name).upstream]
    for file, piece in upstream.pins:
        verified_source(upstream.name, folder, file, piece)


def template_family(suite: str, options: dict) -> str:
    """Which templates produced the numbers: "upstream WISE@eb51174", or vistar's own (not comparable)."""
    if options.get("upstream_dir"):
        family = _family(suite)
        return family.label + (f" ({family.note})" if family.note else "")
    return vistar_label(suite, protocol(suite).version)


def _family(suite: str) -> Family:
    family = protocol(suite).upstream
    if family is None:
        raise ValueError(f"--upstream: the protocol '{suite}' has no upstream family (its benchmark publishes no judge code)")
    return family


def _write(path: Path, data) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
