"""`vistar dsl check FILE`: validate a prompt file; non-zero exit on any error, warnings printed."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from ..ontology import Ontology, OntologyError
from ..prompts_dsl import read_prompts, validate_prompt
from ..prompts_dsl.validate import as_issue
from .common import OntologyOpt, console, fail, out

app = typer.Typer(no_args_is_help=True, help="The prompt language.")


@app.command("check")
def check(file: Path = typer.Argument(..., exists=True, dir_okay=False), ontology: Optional[Path] = OntologyOpt) -> None:
    """Parse and validate FILE (.vistar or .jsonl) against the ontology; exit 1 if any error."""
    try:
        onto = Ontology.load(ontology)
    except OntologyError as exc:
        fail(str(exc))
    parsed = read_prompts(file)
    issues = [as_issue(e) for e in parsed.errors]
    for prompt in parsed.prompts:
        issues += validate_prompt(prompt, onto)
    for issue in issues:
        style = "red" if issue.severity == "error" else "yellow"
        console.print(f"[{style}]{escape(str(issue))}[/]", highlight=False, soft_wrap=True)
    errors = sum(i.severity == "error" for i in issues)
    warnings = len(issues) - errors
    out.print(f"{file}: {len(parsed.prompts)} prompts parsed, {errors} errors, {warnings} warnings", highlight=False, markup=False, soft_wrap=True)
    if errors:
        raise typer.Exit(1)
