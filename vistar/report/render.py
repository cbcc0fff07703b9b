"""Render `ReportData` as tables (wide Table-3 layout, per-angle detail, roles) in HTML and Markdown."""
from __future__ import annotations

import math
from html import escape

import pandas as pd

from . import svg
from .tables import ReportData


def fmt(value, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)) or value is pd.NA:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def ci(lo, hi) -> str:
    return "—" if not (math.isfinite(lo) and math.isfinite(hi)) else f"[{lo:.1f}, {hi:.1f}]"


def table3(data: ReportData) -> pd.DataFrame:
    """The VISTAR paper's Table 3 layout: one row per model, per-angle means, then Overall (Core, Hard, Drop); an
    angle with weight 0 in every role comes after them, as `GC (weight 0)`: shown, but not part of the overall."""
    wide = data.angle_scores.pivot(index="model", columns="angle", values="mean")
    apart = [a for a in data.summary["unweighted_angles"] if a in wide.columns]
    weighted = [a for a in data.summary["angles"] if a in wide.columns and a not in apart]
    overall = data.overall.set_index("model")
    overall = overall.assign(**{"overall 95% CI": [ci(lo, hi) for lo, hi in zip(overall.ci_low, overall.ci_high)]})
    cols = ["overall", "overall 95% CI", "rank"] + (["core", "hard", "drop_pct"] if data.has_sets else [])
    out = wide[weighted].join(overall[cols], how="right").join(wide[apart].rename(columns=lambda a: f"{a} (weight 0)"))
    return out.reset_index().rename(columns={"drop_pct": "drop_%"})


def angle_detail(data: ReportData) -> pd.DataFrame:
    frame = data.angle_scores.copy()
    frame["95% CI"] = [ci(lo, hi) for lo, hi in zip(frame.ci_low, frame.ci_high)]
    return frame[["model", "angle", "name", "mean", "95% CI", "n_ok", "n_error", "n_skipped"]]


def role_table(data: ReportData) -> pd.DataFrame:
    frame = data.role_scores.dropna(subset=["score"]).sort_values(["role", "rank", "model"]).copy()
    frame["95% CI"] = [ci(lo, hi) for lo, hi in zip(frame.ci_low, frame.ci_high)]
    frame["coverage"] = [f"{w:.0%}" + (f" (missing {m})" if m else "") for w, m in zip(frame.covered_weight, frame.angles_missing)]
    return frame[["role", "role_name", "rank", "model", "score", "95% CI", "angles_used", "coverage"]]


def html_table(frame: pd.DataFrame, table_id: str) -> str:
    head = "".join(f"<th>{escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for rec in frame.itertuples(index=False):
        cells = []
        for v in rec:
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            cells.append(f'<td{" class=num" if num else ""}>{escape(fmt(v))}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table id="{table_id}" class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def markdown_table(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    sep = "|" + "|".join("---:" if pd.api.types.is_numeric_dtype(frame[c]) else "---" for c in frame.columns) + "|"
    body = ["| " + " | ".join(fmt(v).replace("|", "\\|") for v in rec) + " |" for rec in frame.itertuples(index=False)]
    return "\n".join([head, sep, *body])


_STYLE = """
body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px}th{background:#f3f3f3;cursor:pointer}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.notes li{margin:.2em 0}.chart{display:block;margin:1em 0}
"""

# Sortable tables; errors are written into the page so a headless check (and a reader) sees them.
_SCRIPT = """
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var idx = Array.prototype.indexOf.call(th.parentNode.children, th);
    var asc = th.dataset.dir !== 'asc'; th.dataset.dir = asc ? 'asc' : 'desc';
    rows.sort(function (a, b) {
      var x = a.cells[idx].textContent, y = b.cells[idx].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
document.body.setAttribute('data-script', 'ok');
"""

_ERROR_HOOK = """
window.addEventListener('error', function (e) {
  var p = document.getElementById('script-errors') || document.body.appendChild(document.createElement('pre'));
  p.id = 'script-errors'; p.textContent += (e.message || 'error') + '\\n';
});
"""


def render_html(data: ReportData, title: str) -> str:
    models, angles = data.summary["models"], data.summary["angles"]
    means = {(r.model, r.angle): r.mean for r in data.angle_scores.itertuples()}
    roles = [r for r in dict.fromkeys(data.role_scores.role) if data.role_scores.loc[data.role_scores.role == r, "score"].notna().any()]
    role_vals = {(r.role, r.model): r.score for r in data.role_scores.itertuples()}
    role_ci = {(r.role, r.model): (r.ci_low, r.ci_high) for r in data.role_scores.itertuples()}
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>",
             f"<style>{_STYLE}</style><script>{_ERROR_HOOK}</script></head><body>",
             f"<h1>{escape(title)}</h1>",
             f"<p>{len(models)} model(s), {len(angles)} angle(s) scored, {data.summary['angle_rows']} angle rows. "
             f"Scores 0–100; 95% CIs from {data.summary['resamples']} seeded bootstrap resamples (seed {data.summary['seed']}). "
             f"Ontology {escape(data.summary['ontology_hash'])}.</p>"]
    if data.judge_templates:  # first: which benchmark the protocol numbers belong to
        parts.append('<h2>Judge templates</h2><ul class="notes" id="judge-templates">'
                     + "".join(f"<li>{escape(n)}</li>" for n in data.judge_templates) + "</ul>")
    if data.notes:
        parts.append('<h2>What this run covers</h2><ul class="notes" id="coverage-notes">'
                     + "".join(f"<li>{escape(n)}</li>" for n in data.notes) + "</ul>")
    if data.provenance:
        parts.append('<h2>What ran</h2><ul class="notes" id="provenance">'
                     + "".join(f"<li>{escape(n)}</li>" for n in data.provenance) + "</ul>")
    parts.append("<h2>Scores by model and angle</h2>" + html_table(table3(data), "table-overview"))
    parts.append(svg.heatmap("plot-heatmap", models, angles, means, "Mean score per model and angle"))
    parts.append("<h2>Role-weighted scores</h2>")
    if roles:
        parts.append(svg.grouped_bars("plot-roles", roles, models, role_vals, role_ci, "Role-weighted score per model (95% CI)"))
        parts.append(html_table(role_table(data), "table-roles"))
    else:
        parts.append("<p>No role has a scored angle in this run.</p>")
    parts.append('<h3>Rankings</h3><ul class="notes" id="ranking-notes">'
                 + ("".join(f"<li>{escape(n)}</li>" for n in data.ranking_notes) or
                    "<li>Every role ranks the models as the overall score does.</li>") + "</ul>")
    parts.append("<h2>Score distributions</h2>")
    parts.append(svg.boxplots("plot-distributions", angles, models, data.distributions, "Score distribution per angle and model"))
    parts.append("<h2>Per-angle detail</h2>" + html_table(angle_detail(data), "table-angles"))
    if data.other_metrics is not None and len(data.other_metrics):
        parts.append("<h2>Other metrics</h2>" + html_table(data.other_metrics, "table-other-metrics"))
    if data.skip_reasons is not None and len(data.skip_reasons):
        parts.append("<h2>Errors and skips</h2>" + html_table(data.skip_reasons, "table-reasons"))
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts)


def render_markdown(data: ReportData, title: str) -> str:
    parts = [f"# {title}", "",
             f"Scores 0–100; 95% CIs from {data.summary['resamples']} seeded bootstrap resamples (seed {data.summary['seed']}).", ""]
    if data.judge_templates:
        parts += ["## Judge templates", "", *(f"- {n}" for n in data.judge_templates), ""]
    if data.notes:
        parts += ["## What this run covers", "", *(f"- {n}" for n in data.notes), ""]
    if data.provenance:
        parts += ["## What ran", "", *(f"- {n}" for n in data.provenance), ""]
    parts += ["## Scores by model and angle", "", markdown_table(table3(data)), ""]
    roles = role_table(data)
    if len(roles):
        parts += ["## Role-weighted scores", "", markdown_table(roles), ""]
    parts += ["## Rankings", "", *(f"- {n}" for n in data.ranking_notes or ["Every role ranks the models as the overall score does."]), ""]
    parts += ["## Per-angle detail", "", markdown_table(angle_detail(data)), ""]
    if data.other_metrics is not None and len(data.other_metrics):
        parts += ["## Other metrics", "", markdown_table(data.other_metrics), ""]
    if data.skip_reasons is not None and len(data.skip_reasons):
        parts += ["## Errors and skips", "", markdown_table(data.skip_reasons), ""]
    return "\n".join(parts)
