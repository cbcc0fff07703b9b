"""The written report: HTML rendered in headless Chromium (plots, tables, no script error), Markdown, CSV, DuckDB, CLI."""
from __future__ import annotations

import re
import shutil
import subprocess

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.support.scores_builder import row, write_run
from vistar.cli import app
from vistar.report import build_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    rows = []
    for model, tr, li in (("alpha", [0.9, 0.8, 0.4], [0.2, 0.3]), ("beta", [0.5, 0.6, 0.5], [0.9, 0.7])):
        rows += [row(model, f"tr{i}", "TR", s, set_="core" if i < 2 else "hard") for i, s in enumerate(tr)]
        rows += [row(model, f"li{i}", "LI", s, set_="core", role="PH") for i, s in enumerate(li)]
    rows.append(row("beta", "li9", "LI", None, status="error", error="image: not a recognised image format", role="PH"))
    return write_run(tmp_path_factory.mktemp("run"), rows)


@pytest.fixture(scope="module")
def report(run, tmp_path_factory):
    return build_report(run, tmp_path_factory.mktemp("report"), resamples=200)


def render(path, tmp_path) -> tuple[str, str]:
    """DOM after scripts ran, and Chromium's log (console messages land there)."""
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--no-first-run", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
                           "--enable-logging=stderr", "--v=0", "--dump-dom", path.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


def script_errors(dom: str, log: str) -> list[str]:
    errors = re.findall(r'<pre id="script-errors">(.*?)</pre>', dom, re.S)
    errors += [ln for ln in log.splitlines() if "CONSOLE" in ln and ("Uncaught" in ln or "Error" in ln)]
    if 'data-script="ok"' not in dom:
        errors.append("the report's script did not finish")
    return errors


@pytest.mark.skipif(CHROMIUM is None, reason="Debian `chromium` is not installed (.ci/run installs it)")
def test_html_renders_with_plots_tables_and_no_script_error(report, tmp_path):
    _, paths = report
    dom, log = render(paths["html"], tmp_path)
    assert script_errors(dom, log) == []
    for chart in ("plot-heatmap", "plot-roles", "plot-distributions"):
        assert re.search(rf'<svg id="{chart}"[^>]*>.*?</svg>', dom, re.S), chart
    assert dom.count('class="cell"') == 4          # 2 models × 2 angles, all scored
    assert dom.count('class="box"') == 4
    assert 'class="bar"' in dom
    for table in ("table-overview", "table-roles", "table-angles", "table-reasons"):
        assert f'<table id="{table}"' in dom, table
    overview = re.search(r'<table id="table-overview".*?</table>', dom, re.S).group(0)
    assert "<th>core</th>" in overview and "<th>drop_%</th>" in overview
    assert "Angles not in this run" in dom
    assert not re.search(r'(src|href)="https?:', dom)  # nothing fetched from the network


@pytest.mark.skipif(CHROMIUM is None, reason="Debian `chromium` is not installed (.ci/run installs it)")
def test_chromium_check_catches_a_script_error(report, tmp_path):
    """The check above can fail: the same page with a broken script is caught."""
    _, paths = report
    broken = tmp_path / "broken.html"
    broken.write_text(paths["html"].read_text().replace("</body>", "<script>notDefinedAnywhere();</script></body>"))
    dom, log = render(broken, tmp_path)
    assert any("notDefinedAnywhere" in e for e in script_errors(dom, log))


def test_markdown_csv_and_duckdb(report):
    data, paths = report
    md = paths["markdown"].read_text()
    assert "| model | TR | LI | overall | overall 95% CI | rank | core | hard | drop_% |" in md
    overview = pd.read_csv(paths["csv:overview"]).set_index("model")
    assert overview.loc["alpha", "TR"] == pytest.approx(70.0)
    assert overview.loc["alpha", "drop_%"] == pytest.approx((85 - 40) / 85 * 100)
    con = duckdb.connect(str(paths["duckdb"]), read_only=True)
    try:
        # the query documented in docs/report.md
        best = con.execute("SELECT role, model, score FROM role_scores WHERE rank = 1 ORDER BY role").fetchall()
        raw = con.execute("SELECT count(*) FROM scores WHERE status = 'error'").fetchone()[0]
    finally:
        con.close()
    assert ("PH", "beta", pytest.approx(80.0)) in [(r, m, s) for r, m, s in best]
    assert raw == 1


def _duckdb_tables(path) -> dict[str, pd.DataFrame]:
    with duckdb.connect(str(path), read_only=True) as con:
        names = [n for (n,) in con.execute("SELECT table_name FROM information_schema.tables ORDER BY table_name").fetchall()]
        return {n: con.execute(f'SELECT * FROM "{n}"').df() for n in names}


def test_report_is_deterministic(run, tmp_path):
    """Every file byte for byte but report.duckdb, whose bytes DuckDB does not keep stable: its tables are equal."""
    _, first = build_report(run, tmp_path / "a", resamples=200)
    _, second = build_report(run, tmp_path / "b", resamples=200)
    assert first.keys() == second.keys()
    for name in first.keys() - {"duckdb"}:
        assert first[name].read_bytes() == second[name].read_bytes(), name
    one, two = _duckdb_tables(first["duckdb"]), _duckdb_tables(second["duckdb"])
    assert one.keys() == two.keys() and {"scores", "overall", "role_scores"} <= one.keys()
    assert all(one[n].equals(two[n]) for n in one)


def test_cli_report_and_bad_run_dir(run, tmp_path):
    result = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "r"), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r" / "report.html").is_file() and (tmp_path / "r" / "tables" / "role_scores.csv").is_file()
    empty = tmp_path / "not-a-run"
    empty.mkdir()
    bad = CliRunner().invoke(app, ["report", str(empty)])
    assert bad.exit_code == 2 and "not a run directory" in " ".join(bad.output.split())


@pytest.mark.parametrize("meta,expected", [
    (None, "This run has no run.json"),
    ({"status": "running"}, "The run is not complete (run.json status: 'running'): it was interrupted"),
    ({"status": "partial", "missing_shards": [2, 3], "merged_from": [{"run": "/r/s1", "shard": {"index": 1, "count": 3},
                                                                        "status": "complete"}]},
     ("The run is not complete (run.json status: 'partial'): it was merged with `vistar merge --partial` from an "
      "incomplete set of runs; its scores cover only part of the work. Missing shards: 2/3, 3/3.")),
    ({"status": "complete", "shard": {"index": 2, "count": 4}}, "This run is shard 2/4"),
    ("{not json", "run.json cannot be read"),
    ({"status": "partial", "missing_shards": 5, "merged_from": "s1"},  # hand-edited types: read, not a traceback
     ("The run is not complete (run.json status: 'partial'): it was merged with `vistar merge --partial` from an "
      "incomplete set of runs; its scores cover only part of the work. Missing shards: 5.")),
])
def test_a_run_that_did_not_finish_is_named_in_the_report_notes(tmp_path, meta, expected):
    import json

    run = write_run(tmp_path / "run", [row("alpha", "t", "TR", 0.5), row("beta", "t", "TR", 0.6)])
    if meta is None:
        (run / "run.json").unlink()
    else:
        (run / "run.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
    result = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "r"), "--resamples", "100"],
                                terminal_width=400)
    assert result.exit_code == 0, result.output
    assert expected in " ".join(result.output.split())
    html, md = (tmp_path / "r" / "report.html").read_text(), (tmp_path / "r" / "report.md").read_text()
    assert expected.replace("'", "&#x27;") in html and expected in md
    notes = pd.read_csv(tmp_path / "r" / "tables" / "notes.csv")
    assert notes.loc[notes.note.str.startswith(expected[:20]), "kind"].tolist() == ["run"]


def test_a_complete_run_has_no_run_notice(report):
    data, _ = report
    assert not any("run.json" in n or "shard" in n for n in data.notes)
