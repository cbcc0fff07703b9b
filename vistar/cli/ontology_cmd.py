"""`vistar ontology show`: print the effective ontology (defaults merged with the user's file)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..ontology import Ontology, OntologyError
from .common import OntologyOpt, fail, out

app = typer.Typer(no_args_is_help=True, help="Roles, angles, relevance mask, weights and metric parameters.")


@app.command("show")
def show(ontology: Optional[Path] = OntologyOpt) -> None:
    try:
        onto = Ontology.load(ontology)
    except OntologyError as exc:
        fail(str(exc))
    out.print(onto.to_yaml(), highlight=False, markup=False)
