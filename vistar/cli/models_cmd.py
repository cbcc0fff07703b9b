"""`vistar models list | fetch NAME | verify [NAME]`: what weights exist, get them, check their hashes."""
from __future__ import annotations

import json
import sys
from typing import Optional

import typer
from rich.table import Table

from ..models import MissingWeightError, catalog, spec
from ..models.fetch import FetchError, fetch as fetch_model, verify as verify_model
from .common import ModelPathOpt, fail, out, parse_model_paths, print_table, say
from .exit_codes import ExitCode, is_system_failure
from .style import App

app = App(no_args_is_help=True, help="Pretrained weights: list, fetch (the only network access), verify.")


def _where(name: str, model_paths: dict[str, str]) -> str:
    from ..models import resolve_weight

    try:
        return str(resolve_weight(name, model_paths))
    except MissingWeightError:
        return "missing"


@app.command("list")
def list_models(model_path: Optional[list[str]] = ModelPathOpt,
                as_json: bool = typer.Option(False, "--json", help="Print JSON (with each model's source) instead of a table")) -> None:
    """Every model in the catalogue: library, licence and where it is on disk (or `missing`)."""
    paths = parse_model_paths(model_path)
    models = [{"name": name, "library": m.library, "licence": m.licence, "source": m.source, "path": _where(name, paths)}
              for name, m in sorted(catalog().items())]
    if as_json:
        sys.stdout.write(json.dumps(models, indent=2) + "\n")
        return
    table = Table(title="model weights (--json: every field)")
    table.add_column("model", no_wrap=True)  # whole, to be copied into `vistar models fetch`
    for col in ("library", "licence"):
        table.add_column(col)
    table.add_column("path", overflow="fold")  # or `missing`
    for m in models:  # the table keeps the first part of each description; --json has all of it
        table.add_row(m["name"], m["library"].split(" (")[0], m["licence"].split(" (")[0], m["path"])
    print_table(table)


@app.command("fetch")
def fetch(name: str = typer.Argument(..., help="Catalogue name, see `vistar models list`"),
          force: bool = typer.Option(False, "--force", help="Download again even if a local copy exists")) -> None:
    """Download NAME into $VISTAR_HOME/models/NAME (HF models: reuse the HF cache when present)."""
    try:
        spec(name)
        path = fetch_model(name, force=force)
    except KeyError as exc:
        fail(str(exc.args[0]))
    except ImportError as exc:
        fail(f"fetching {name} needs {exc.name}: install the `cv` extra (pip install 'vistar[cv]')", code=1)
    except (FetchError, OSError) as exc:  # a full disk is the system's failure; a network error, the fetch's
        fail(f"fetching {name} failed: {exc}", code=ExitCode.IO_FAILURE if is_system_failure(exc) else ExitCode.FINDINGS)
    say(f"{name}: {path}", to=out)
    _report(name, {}, quiet_ok=True)


@app.command("verify")
def verify(name: Optional[str] = typer.Argument(None, help="One model (default: every model found locally)"),
           model_path: Optional[list[str]] = ModelPathOpt) -> None:
    """Compare local files with the catalogue's sha256; exit 1 on any mismatch or missing file."""
    paths = parse_model_paths(model_path)
    names = [name] if name else sorted(catalog())
    bad = False
    for item in names:
        try:
            spec(item)
        except KeyError as exc:
            fail(str(exc.args[0]))
        bad |= _report(item, paths, skip_absent=name is None)
    if bad:
        raise typer.Exit(1)


def _report(name: str, paths: dict[str, str], skip_absent: bool = False, quiet_ok: bool = False) -> bool:
    """Print one model's file checks; True when something is wrong."""
    try:
        path, checks = verify_model(name, paths)
    except MissingWeightError as exc:
        if skip_absent:
            say(f"{name}: not present")
            return False
        say(exc, "red")
        return True
    wrong = False
    for check in checks:
        wrong |= check.status in ("mismatch", "missing")
        if check.status == "ok" and quiet_ok:
            continue
        detail = f"sha256 {check.actual}" if check.status in ("ok", "recorded", "unpinned") else f"expected {check.expected}, got {check.actual}"
        say(f"{name}/{check.file}: {check.status} ({detail})", to=out)
    if not quiet_ok:
        say(f"{name}: {path}", to=out)
    return wrong
