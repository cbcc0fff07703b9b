"""What `vistar score` needs from the judge layer: judge options, suite prompt files, and the end-of-run
cost and protocol reports (kept here so the score command itself only forwards options)."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from ..atomic import write_text_atomic
from ..engine import registry
from ..suites.catalog import builtin_suites
from .prices import Ledger

JudgeUrlOpt = typer.Option(None, "--judge-url", help="OpenAI-compatible base URL of the VLM judge, e.g. https://api.openai.com/v1")
JudgeModelOpt = typer.Option(None, "--judge-model", help="Judge model id, e.g. gpt-4o-2024-08-06")
JudgeKeyEnvOpt = typer.Option(None, "--judge-key-env", help="Name of the environment variable holding the judge API key")
JudgeModeOpt = typer.Option(None, "--judge-mode", help="HWPQ: per-question (paper) or batched (one call per vote)")
JudgeConfigOpt = typer.Option(None, "--judge-config", exists=True, dir_okay=False, help="YAML judge settings (docs/judge.md)")
JudgeCacheOnlyOpt = typer.Option(False, "--judge-cache-only", help="Rebuild judge scores from the judge cache without calling the judge")
HwpqDirOpt = typer.Option(None, "--hwpq-dir", file_okay=False, help="Folder of HWPQ questionnaires (default $VISTAR_HOME/hwpq)")
SuiteOpt = typer.Option(None, "--suite", help=f"A shipped suite ({', '.join(builtin_suites())}) or a sibling "
                        f"protocol: {', '.join(registry.PROTOCOLS)}")
DataDirOpt = typer.Option(None, "--data-dir", exists=True, file_okay=False, help="The protocol's public data folder (or a folder containing it)")
UpstreamOpt = typer.Option(None, "--upstream", exists=True, file_okay=False,
                           help="With --suite: judge with the benchmark's own prompts and rules, read from this checkout "
                                "of its repository (`vistar upstream fetch NAME`); numbers comparable with published tables")


def judge_options(url, model, key_env, mode, config, cache_only, hwpq_dir, data_dir, upstream=None) -> dict:
    """Run options for the judge stages; the ledger collects calls and cost for the end-of-run report."""
    options = {"judge_url": url, "judge_model": model, "judge_key_env": key_env, "judge_mode": mode,
               "judge_config": str(config) if config else None, "judge_cache_only": True if cache_only else None,
               "hwpq_dir": str(hwpq_dir) if hwpq_dir else None, "data_dir": str(data_dir) if data_dir else None,
               "upstream_dir": str(upstream) if upstream else None}
    options = {k: v for k, v in options.items() if v is not None}
    from .config import config_from_options

    cfg = config_from_options(options)  # fail early on a bad setting, before any image is read
    if cfg is not None and cfg.key_env and not cfg.api_key:
        raise ValueError(f"--judge-key-env {cfg.key_env}: that environment variable is not set")
    options["judge_ledger"] = Ledger()
    return options


def suite_prompts(name: str, data_dir: Path | None, out_dir: Path, upstream: Path | None = None) -> tuple[Path, list[str]]:
    """Write the suite's prompts (a shipped suite, or a protocol's imported items) as a prompt file in the run
    directory, so the run records exactly what it scored; returns it and the import problems. With `upstream`
    (a checkout of the benchmark's repository, checked here against the pinned pieces) every prompt carries
    `template="upstream"`, so its rows are never mixed with rows judged by vistar's own templates."""
    from ..prompts_dsl.parser import serialize_prompt
    from ..suites import load_builtin
    from ..suites.export import render
    from .protocols import protocol

    if name in builtin_suites():
        if upstream is not None:
            raise ValueError(f"--upstream is for the benchmark suites, not the shipped suite '{name}'")
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"suite-{name}.vistar"
        write_text_atomic(path, render(load_builtin(name), "vistar"))
        return path, []
    proto = protocol(name)
    if data_dir is None:
        raise ValueError(f"--suite {name} needs --data-dir (the benchmark's public data folder)")
    if upstream is not None:
        check_upstream(name, upstream)
    items = proto.load_items(data_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"suite-{name}.jsonl"
    prompts = [item.to_prompt() for item in items]
    if upstream is not None:
        from .protocols.upstream_families import UPSTREAM_TEMPLATE

        for p in prompts:
            p.controls["template"] = UPSTREAM_TEMPLATE
    lines = [json.dumps({"id": p.id, "prompt": serialize_prompt(p), **p.metadata}, ensure_ascii=False) for p in prompts]
    write_text_atomic(path, "".join(line + "\n" for line in lines))
    return path, list(items.problems)


def after_run(out_dir: Path, options: dict, suite: str | None, echo) -> None:
    """Print and save the judge's usage and cost, and the protocol's benchmark-level summary."""
    ledger: Ledger | None = options.get("judge_ledger")
    if ledger is not None and (ledger.calls or ledger.cache_hits or ledger.failures):
        for line in ledger.lines():
            echo(line)
        from .config import config_from_options

        cfg = config_from_options(options)
        _write(out_dir / "judge_usage.json", {**ledger.summary(), "judge": cfg.public() if cfg else None})
    if suite and suite not in builtin_suites():  # protocols have benchmark-level numbers; shipped suites use `report`
        from ..engine.store import read_scores
        from .protocols import protocol
        from .protocols.aggregate import summarize

        family = template_family(suite, options)
        items = protocol(suite).load_items(options["data_dir"]) if options.get("data_dir") else None
        summary = summarize(suite, read_scores(out_dir), items)
        _write(out_dir / f"summary-{suite}.json", {**summary, "template_family": family})
        _note_in_run_json(out_dir, suite, family)
        echo(f"{suite}: judged with {family}")
        for model, numbers in sorted(summary.items()):
            echo(f"{suite} {model}: {json.dumps(protocol(suite).headline(numbers))}")


def check_upstream(name: str, folder: Path) -> None:
    """Refuse a checkout that lacks a pinned piece or holds another version of it, before any image is judged."""
    from .protocols.upstream_families import FAMILIES
    from .protocols.upstream_source import UPSTREAMS, verified_source

    upstream = UPSTREAMS[FAMILIES[name].upstream]
    for file, piece in upstream.pins:
        verified_source(upstream.name, folder, file, piece)


def template_family(suite: str, options: dict) -> str:
    """Which templates produced the numbers: "upstream WISE@eb51174", or vistar's own (not comparable)."""
    from .protocols import protocol
    from .protocols.upstream_families import FAMILIES, vistar_label

    if options.get("upstream_dir"):
        return FAMILIES[suite].label + (f" ({FAMILIES[suite].note})" if FAMILIES[suite].note else "")
    return vistar_label(suite, protocol(suite).version)


def _note_in_run_json(out_dir: Path, suite: str, family: str) -> None:
    """run.json names the template family beside the run's other facts."""
    path = out_dir / "run.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(meta, dict):
        from ..engine.runmeta import write_json_atomic

        write_json_atomic(path, {**meta, "judge_templates": {suite: family}})


def _write(path: Path, data) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
