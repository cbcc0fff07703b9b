"""Options and helpers shared by several commands."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

console = Console(stderr=True)
out = Console()

OntologyOpt = typer.Option(None, "--ontology", help="YAML file merged over the default ontology.", exists=True, dir_okay=False)
WeightsOpt = typer.Option(None, "--weights", help="Weights YAML (e.g. from `vistar calibrate --fit`), merged over the ontology.", exists=True, dir_okay=False)


def fail(message: str, code: int = 2) -> None:
    console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def parse_model_paths(items: Optional[list[str]]) -> dict[str, str]:
    paths = {}
    for item in items or []:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            fail(f"--model-path expects NAME=PATH, got '{item}'")
        paths[name] = str(Path(path).expanduser())
    return paths
