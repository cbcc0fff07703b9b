"""`vistar dsl check FILE`: validate a prompt file; non-zero exit on any error, warnings printed."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..ontology import Ontology, OntologyError
from ..prompts_dsl import read_prompts, validate_prompt
from ..prompts_dsl.validate import as_issue, with_ontology_codes
from .common import OntologyOpt, fail, out, printable, say
from .exit_codes import ExitCode
from .style import App

app = App(no_args_is_help=True, help="The prompt language.")


@app.command("check")
def check(file: Path = typer.Argument(..., exists=True, dir_okay=False, metavar="FILE", help="Prompt file (.vistar or .jsonl)"),
          ontology: Optional[Path] = OntologyOpt) -> None:
    """Parse and validate FILE against the ontology; exit 1 if any error, 4 if it holds no prompt."""
    try:
        onto = Ontology.load(ontology)
    except OntologyError as exc:
        fail(str(exc))
    parsed = read_prompts(file)
    issues = [as_issue(e) for e in parsed.errors]
    for prompt in parsed.prompts:
        issues += validate_prompt(with_ontology_codes(prompt, onto), onto)
    for issue in issues:
        say(issue, "red" if issue.severity == "error" else "yellow")
    errors = sum(i.severity == "error" for i in issues)
    warnings = len(issues) - errors
    out.print(printable(f"{file}: {len(parsed.prompts)} prompts parsed, {errors} errors, {warnings} warnings"),
              highlight=False, markup=False, soft_wrap=True)
    if errors:
        raise typer.Exit(int(ExitCode.FINDINGS))
    if not parsed.prompts:
        fail(f"{file} holds no prompt (empty, or only blank and # comment lines)", ExitCode.NOTHING_SCORED)
