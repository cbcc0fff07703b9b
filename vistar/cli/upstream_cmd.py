"""`vistar upstream list | fetch NAME | check NAME DIR`: the benchmarks' own judge code for `score --upstream`."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..vlm.protocols.upstream_source import UPSTREAMS, UpstreamError, default_dest, fetch as fetch_upstream, verified_source
from .common import fail, out

app = typer.Typer(no_args_is_help=True, help="Benchmark judge code at pinned commits: list, fetch (git clone), check.")


def _known(name: str) -> str:
    match = next((k for k in UPSTREAMS if k.lower() == name.lower()), None)
    if match is None:
        fail(f"unknown benchmark '{name}' (known: {', '.join(UPSTREAMS)})")
    return match


@app.command("list")
def list_upstreams() -> None:
    """One tab-separated line per benchmark: name, repository, pinned commit, default checkout folder."""
    for name, up in UPSTREAMS.items():
        out.print(f"{name}\t{up.repo}\t{up.commit}\t{default_dest(name)}", highlight=False, soft_wrap=True)


@app.command("fetch")
def fetch(name: str = typer.Argument(..., help="WISE, GenExam, UniEval or PhyBench"),
          dest: Optional[Path] = typer.Option(None, "--dest", file_okay=False, help="Checkout folder (default $VISTAR_HOME/upstream/NAME)")) -> None:
    """git clone the benchmark's repository at its pinned commit and check its judge code; prints the folder
    to pass as `vistar score --suite ... --upstream DIR`."""
    name = _known(name)
    try:
        path = fetch_upstream(name, dest or default_dest(name))
    except UpstreamError as exc:
        fail(str(exc), code=1)
    out.print(f"{name}: {path}", highlight=False, soft_wrap=True)


@app.command("check")
def check(name: str = typer.Argument(..., help="WISE, GenExam, UniEval or PhyBench"),
          folder: Path = typer.Argument(..., exists=True, file_okay=False, help="A checkout of its repository")) -> None:
    """Check that FOLDER holds the pinned judge code (exit 1, naming the piece, when it does not)."""
    name = _known(name)
    try:
        for file, piece in UPSTREAMS[name].pins:
            verified_source(name, folder, file, piece)
    except UpstreamError as exc:
        fail(str(exc), code=1)
    out.print(f"{name}: {folder} matches {UPSTREAMS[name].label}", highlight=False, soft_wrap=True)
