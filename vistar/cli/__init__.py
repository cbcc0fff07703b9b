"""`vistar` command line: one typer app; each command group lives in its own module."""
from __future__ import annotations

from . import bench_cmd, dsl_cmd, ontology_cmd, score_cmd
from .style import App

app = App(no_args_is_help=True, add_completion=False, help="Deterministic metric engine for text-to-image evaluation.")
app.command("score")(score_cmd.score)
app.command("report")(__import__("vistar.cli.report_cmd", fromlist=["report"]).report)
app.command("calibrate")(__import__("vistar.cli.calibrate_cmd", fromlist=["calibrate"]).calibrate)
app.command("merge")(__import__("vistar.cli.merge_cmd", fromlist=["merge"]).merge)
app.command("bench")(bench_cmd.bench)
app.add_typer(dsl_cmd.app, name="dsl")
app.add_typer(__import__("vistar.cli.suite_cmd", fromlist=["app"]).app, name="suite")
app.add_typer(ontology_cmd.app, name="ontology")
app.add_typer(__import__("vistar.cli.models_cmd", fromlist=["app"]).app, name="models")
app.add_typer(__import__("vistar.cli.gc_cmd", fromlist=["app"]).app, name="gc")
app.add_typer(__import__("vistar.cli.hwpq_cmd", fromlist=["app"]).app, name="hwpq")
app.command("validate")(__import__("vistar.cli.validate_cmd", fromlist=["validate"]).validate)
app.add_typer(__import__("vistar.cli.upstream_cmd", fromlist=["app"]).app, name="upstream")


def main() -> None:
    app()
