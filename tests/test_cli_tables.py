"""Tables fit 80 columns and never cut a cell short: a path column folds onto more lines, every other column keeps
its widest cell whole, and a table that cannot fit even so is printed at the width it needs (the terminal wraps)."""
import io
from types import SimpleNamespace

import pandas as pd
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from vistar.cli import app, common
from vistar.cli.calibrate_cmd import agreement_table
from vistar.cli.common import print_table

PATH = "/home/someone/.cache/huggingface/hub/models--Intel--dpt-hybrid-midas/snapshots/0123456789abcdef"


def rendered(table: Table, width: int) -> list[str]:
    buffer = io.StringIO()
    print_table(table, Console(file=buffer, width=width, color_system=None))
    return buffer.getvalue().splitlines()


def weights_table(path: str = PATH) -> Table:
    table = Table(title="weights")
    table.add_column("model", no_wrap=True)
    table.add_column("library")
    table.add_column("path", overflow="fold")
    table.add_row("grounding-dino-tiny-long-name", "transformers", path)
    table.add_row("sam", "torch", "missing")
    return table


def cells(lines: list[str], column: int) -> str:
    """The text of one column, its folded lines joined."""
    return "".join(line.split("│")[column].strip() for line in lines if line.startswith("│"))


def test_a_path_folds_within_80_columns_and_the_other_cells_stay_whole():
    lines = rendered(weights_table(), 80)
    assert max(len(line) for line in lines) <= 80
    assert cells(lines, 3) == PATH + "missing"  # folded, nothing cut or lost
    assert any("│ grounding-dino-tiny-long-name │ transformers │" in line for line in lines)


def test_too_narrow_even_folded_prints_at_the_width_needed_without_cutting():
    lines = rendered(weights_table(), 40)
    assert cells(lines, 3) == PATH + "missing" and "…" not in "".join(lines)
    assert any("│ grounding-dino-tiny-long-name │ transformers │" in line for line in lines)
    assert max(len(line) for line in lines) == 2 + 29 + 3 + 12 + 3 + 20 + 2  # "│ " cells " │ "…" │", path at 20


def test_a_table_that_fits_is_printed_as_rich_lays_it_out():
    table = weights_table("short/path")
    buffer = io.StringIO()
    Console(file=buffer, width=80, color_system=None).print(table)
    assert rendered(weights_table("short/path"), 80) == buffer.getvalue().splitlines()


def test_calibrate_table_fits_80_columns_with_intervals_and_long_metric_names():
    metrics = pd.DataFrame([{"metric": "genexam.relaxed.v2x", "judgments": 12345, "ppa": 0.593, "ppa_ci_low": 0.348,
                             "ppa_ci_high": 0.93, "acc23": 0.444, "epsilon": 0.0125, "tau_b": -0.16,
                             "tau_b_ci_low": -0.258, "tau_b_ci_high": 0.624}])
    lines = rendered(agreement_table(SimpleNamespace(n_judgments=12345, metrics=metrics)), 80)
    assert max(len(line) for line in lines) <= 80
    text = "\n".join(lines)
    for value in ("genexam.relaxed.v2x", "12345", "0.593", "[0.348, 0.930]", "-0.160", "[-0.258, 0.624]", "(0.0125)"):
        assert value in text


def test_models_list_with_a_local_path_fits_80_columns(tmp_path, monkeypatch):
    monkeypatch.setattr(common.out, "width", 80)  # an 80-column terminal, whatever COLUMNS the tests run under
    weights = tmp_path / "a-long-folder-name-for-the-weights" / "models--Intel--dpt-hybrid-midas" / "snapshots" / "abc"
    weights.mkdir(parents=True)
    res = CliRunner().invoke(app, ["models", "list", "--model-path", f"dpt-hybrid-midas={weights}"],
                             env={"VISTAR_HOME": str(tmp_path / "home")})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert str(weights) in cells(lines, 4)
