"""`vistar ontology show`: print the effective ontology (defaults merged with the user's file)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ..ontology import Ontology, OntologyError
from .common import OntologyOpt, fail, out, print_table
from .style import App

app = App(no_args_is_help=True, help="Roles, angles, relevance mask, weights and metric parameters.")


@app.command("show")
def show(ontology: Optional[Path] = OntologyOpt,
         weights: bool = typer.Option(False, "--weights", help="Print the role x angle weight table (renormalised) instead of YAML.")) -> None:
    """Print the merged ontology as YAML, or the effective per-role angle weights."""
    try:
        onto = Ontology.load(ontology)
    except OntologyError as exc:
        fail(str(exc))
    if not weights:
        out.print(onto.to_yaml(), highlight=False, markup=False, soft_wrap=True)
        return
    table = Table(title=f"role weights over the relevance mask (ontology {onto.hash})")
    table.add_column("role")
    for angle in onto.angles:
        table.add_column(angle, justify="right")
    for role in onto.roles:
        w = onto.role_weights(role) if onto.mask.get(role) else {}
        table.add_row(role, *(f"{w[a]:.3f}" if a in w else "·" for a in onto.angles))
    print_table(table)
