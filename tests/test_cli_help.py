"""The CLI looks finished: usage lines name arguments, every option has help, flags show no type, help and
tables fit 80 columns; `models list` is a table (or JSON) and `report` prints who is best and what is covered."""
import json
import re

import pytest
from rich.cells import cell_len
from typer.main import get_command
from typer.testing import CliRunner

from tests.support.scores_builder import row, write_run
from vistar.cli import app
from vistar.models import catalog
from vistar.ontology import Ontology

NARROW = {"COLUMNS": "80"}


def commands(cmd=None, path=("vistar",)):
    cmd = cmd or get_command(app)
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            yield from commands(sub, (*path, name))
    else:
        yield path, cmd


COMMANDS = list(commands())


def test_every_option_and_argument_has_help():
    missing = [f"{' '.join(path)} {param.name}" for path, cmd in COMMANDS for param in cmd.params if not param.help]
    assert missing == []


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_help_names_arguments_shows_no_bool_noise_and_fits_80_columns(path):
    res = CliRunner().invoke(app, [*path[1:], "--help"], env=NARROW)
    assert res.exit_code == 0, res.output
    usage = next(line for line in res.output.splitlines() if "Usage:" in line)
    assert "{" not in usage and "}" not in usage, usage  # typer's `{images}`: names instead, e.g. IMAGES
    assert "<bool>" not in res.output
    assert max(cell_len(line) for line in res.output.splitlines()) <= 80


def test_score_usage_reads_like_the_readme():
    res = CliRunner().invoke(app, ["score", "--help"], env=NARROW, prog_name="vistar")
    assert re.search(r"^ *Usage: vistar score \[OPTIONS\] IMAGES *$", res.output, re.M), res.output
    assert "NAME=PATH" in res.output  # --model-path's value, not <list[str]>


def test_models_list_is_a_table_within_80_columns_and_json_on_request(tmp_path):
    env = {**NARROW, "VISTAR_HOME": str(tmp_path), "HF_HOME": str(tmp_path / "hf")}
    table = CliRunner().invoke(app, ["models", "list"], env=env)
    assert table.exit_code == 0 and "\t" not in table.output
    assert max(cell_len(line) for line in table.output.splitlines()) <= 80
    header = next(line for line in table.output.splitlines() if "model" in line and "licence" in line)
    assert "path" in header
    for name in catalog():  # every name whole, so it can be pasted into `vistar models fetch`
        assert f" {name} " in table.output
    listed = json.loads(CliRunner().invoke(app, ["models", "list", "--json"], env=env).stdout)
    assert [m["name"] for m in listed] == sorted(catalog())
    assert all(m["path"] == "missing" and m["source"] for m in listed)  # an empty VISTAR_HOME holds nothing


def test_report_prints_the_best_model_per_role_and_the_coverage(tmp_path):
    # GD = TR, SF, CSE, MA (equal weights; GC is experimental, weight 0): A is better on TR, B on CSE by more; ED = TR, CSE, PSC likewise
    rows = [row("A", "t1", "TR", 0.9), row("B", "t1", "TR", 0.5), row("A", "c1", "CSE", 0.2),
            row("B", "c1", "CSE", 0.8), row("A", "p1", "PSC", None, status="error", error="boom")]
    run = write_run(tmp_path / "run", rows)
    res = CliRunner().invoke(app, ["report", str(run), "--resamples", "100"], env=NARROW)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "2 model(s); angles scored: TR, CSE; angle rows: 4 ok, 1 error, 0 skipped" in lines
    assert "best overall: B (65.0)" in lines  # A (90+20)/2 = 55, B (50+80)/2 = 65
    gd = Ontology.load().role_weights("GD")  # B leads GD on the share of its weight that TR and CSE carry
    assert f"  GD Graphic Designer: B (65.0; {gd['TR'] + gd['CSE']:.0%})" in lines
    assert not any(line.startswith("  GA ") for line in lines)  # GA has no scored angle: no line
