"""`vistar suite list | show | export | stats | screen`: the benchmark prompt suites."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Column, Table

from ..models import MissingWeightError
from ..suites.catalog import SuiteError
from ..suites.export import FORMATS, render
from ..suites.loader import LoadedSuite, list_suites, load_suite
from ..suites.safety import ClassifierScreen, DetoxifyClassifier, WordListScreen
from ..suites.stats import near_duplicates, suite_stats
from .common import ModelPathOpt, console, fail, out, parse_model_paths, safe, say
from .exit_codes import os_error_code
from .style import App

app = App(no_args_is_help=True, help="Benchmark prompt suites: list, show, export for generation, statistics, safety screen.")

NameArg = typer.Argument(..., help="Suite name (`vistar suite list`) or a prompt file (.vistar/.jsonl)")
DataDirOpt = typer.Option(None, "--data-dir", help="Folder with the sibling benchmarks' data (default: ../shared/data beside the checkout)", file_okay=False)


def _load(name: str, data_dir: Optional[Path]) -> LoadedSuite:
    try:
        suite = load_suite(name, data_dir)
    except SuiteError as exc:
        fail(str(exc))
    for problem in suite.problems:
        say(f"skipped: {problem}", "yellow")
    return suite


@app.command("list")
def list_cmd(data_dir: Optional[Path] = DataDirOpt) -> None:
    """Every suite: shipped ones and the sibling benchmarks (with a prompt count when their data is found)."""
    table = Table(Column("suite", no_wrap=True), "origin", "version", "prompts", "description")  # names whole: `--suite` takes them
    for info in list_suites():
        try:
            count = str(len(load_suite(info.name, data_dir).prompts))
        except SuiteError:
            count = "data not found"
        table.add_row(info.name, info.origin, info.version, count, info.description)
    out.print(table)


@app.command("show")
def show(name: str = NameArg, limit: int = typer.Option(20, "--limit", help="Prompts to list (0: all)"),
         data_dir: Optional[Path] = DataDirOpt) -> None:
    """A suite's version, size and its first prompts."""
    suite = _load(name, data_dir)
    info = suite.info
    out.print(f"[bold]{safe(info.name)}[/] {safe(info.version)} ({safe(info.origin)}): {safe(info.description)}", highlight=False)
    out.print(f"{len(suite.prompts)} prompts", highlight=False)
    table = Table("id", "role|angle", "set", "core")
    shown = suite.prompts if limit <= 0 else suite.prompts[:limit]
    for p in shown:
        table.add_row(safe(p.id), safe(f"{p.role}|{p.angle}"), safe(p.set or ""), safe(p.core))
    out.print(table)
    if len(shown) < len(suite.prompts):
        out.print(f"... {len(suite.prompts) - len(shown)} more (--limit 0 lists all)", highlight=False)


@app.command("export")
def export(name: str = NameArg,
           fmt: str = typer.Option("jsonl", "--format", help=f"One of: {', '.join(FORMATS)}"),
           out_file: Optional[Path] = typer.Option(None, "--out", help="Write here instead of standard output", dir_okay=False),
           only_set: Optional[str] = typer.Option(None, "--set", help="Keep only prompts of this set (core/hard)"),
           data_dir: Optional[Path] = DataDirOpt) -> None:
    """Prompt ids with their plain natural-language cores, to generate IMAGES/<model>/<prompt_id>.png."""
    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, not '{fmt}'")
    prompts = _load(name, data_dir).prompts
    if only_set is not None:
        prompts = [p for p in prompts if p.set == only_set]
    text = render(prompts, fmt)
    if out_file is None:
        sys.stdout.write(text)
    else:
        try:
            out_file.write_text(text, encoding="utf-8")
        except OSError as exc:  # e.g. a folder that does not exist
            fail(str(exc), os_error_code(exc))
        console.print(f"{len(prompts)} prompts written to {out_file}", highlight=False)


@app.command("stats")
def stats(name: str = NameArg, as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables"),
          dup_threshold: float = typer.Option(0.5, "--dup-threshold", help="Token-set Jaccard at which two cores count as near-duplicates"),
          data_dir: Optional[Path] = DataDirOpt) -> None:
    """Counts per set/role/angle, lexical diversity (Yule's K and I), mean length, near-duplicates, word-list flags."""
    prompts = _load(name, data_dir).prompts
    result = suite_stats(prompts)
    dups = near_duplicates(prompts, dup_threshold)
    flags = WordListScreen.default().screen(prompts)
    if as_json:
        payload = {**result.to_dict(), "near_duplicates": [list(d) for d in dups],
                   "wordlist_flags": [f.__dict__ for f in flags]}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    y = result.yule
    out.print(f"{result.prompts} prompts; mean length {result.mean_tokens:.1f} tokens / {result.mean_chars:.1f} characters", highlight=False)
    out.print(f"tokens N={y.tokens}, types V={y.types}; Yule's K={_fmt(y.k)}, Yule's I (V^2/(M2-V))={_fmt(y.i)}, "
              f"I_N (N^2/(M2-N))={_fmt(y.i_n)}", highlight=False)
    for title, counts in (("set", result.by_set), ("role", result.by_role), ("angle", result.by_angle)):
        out.print(f"by {title}: " + ", ".join(f"{k}={v}" for k, v in counts.items()), highlight=False)
    table = Table("role|angle", "prompts")
    for pair, count in result.by_pair.items():
        table.add_row(pair, str(count))
    out.print(table)
    out.print(f"near-duplicate pairs (Jaccard >= {dup_threshold}): {len(dups)}", highlight=False)
    for a, b, sim in dups[:20]:
        out.print(f"  {a} ~ {b}: {sim:.2f}", highlight=False)
    out.print(f"word-list safety flags: {len(flags)}", highlight=False)


@app.command("screen")
def screen(name: str = NameArg,
           blocklist: Optional[list[Path]] = typer.Option(None, "--blocklist", exists=True, dir_okay=False,
                                                          help="Extra word list (YAML `categories: {name: [term, ...]}`); repeatable"),
           classifier: Optional[str] = typer.Option(None, "--classifier", help="Also run a learned classifier: detoxify"),
           threshold: float = typer.Option(0.5, "--threshold", help="Classifier probability that flags a prompt"),
           model_path: Optional[list[str]] = ModelPathOpt,
           data_dir: Optional[Path] = DataDirOpt) -> None:
    """Safety screen; exits 1 when any prompt is flagged."""
    prompts = _load(name, data_dir).prompts
    try:
        screens = [WordListScreen.from_files(blocklist or [])]
    except ValueError as exc:   # not YAML, or not `categories: {name: [term, ...]}`
        fail(str(exc))
    except OSError as exc:
        fail(str(exc), os_error_code(exc))
    if classifier is not None:
        if classifier != "detoxify":
            fail(f"unknown classifier '{classifier}' (available: detoxify)")
        from ..models import resolve_weight

        try:
            screens.append(ClassifierScreen(DetoxifyClassifier(resolve_weight("detoxify-original", parse_model_paths(model_path))), threshold))
        except MissingWeightError as exc:
            fail(str(exc))
    flags = [flag for s in screens for flag in s.screen(prompts)]
    for f in flags:
        say(f"{f.prompt_id}: {f.category}: '{f.match}' ({f.screen}, {f.score:.2f})", "red")
    out.print(f"{len(prompts)} prompts screened by {', '.join(s.name for s in screens)}: {len(flags)} flags", highlight=False)
    if flags:
        raise typer.Exit(1)


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"
