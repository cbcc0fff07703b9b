"""Hand-written SVG charts for the HTML report: inline, dependency-free and byte-for-byte deterministic.

Scores are on 0–100. Colours follow the viridis colour map (sampled stops, linearly interpolated), which
stays readable in greyscale and for colour-blind readers.
"""
from __future__ import annotations

import math
from html import escape

import numpy as np

_VIRIDIS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
_SERIES = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#000000"]
_FONT = 'font-family="sans-serif" font-size="12"'


def viridis(value: float) -> str:
    """Colour for a 0–100 score."""
    t = min(1.0, max(0.0, value / 100.0)) * (len(_VIRIDIS) - 1)
    i = min(int(t), len(_VIRIDIS) - 2)
    f = t - i
    rgb = [round(a + (b - a) * f) for a, b in zip(_VIRIDIS[i], _VIRIDIS[i + 1])]
    return "#%02x%02x%02x" % tuple(rgb)


def series_colour(i: int) -> str:
    return _SERIES[i % len(_SERIES)]


def _svg(chart_id: str, width: float, height: float, body: list[str], title: str) -> str:
    return (f'<svg id="{chart_id}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
            + "".join(body) + "</svg>")


def _text(x, y, s, anchor="start", extra=""):
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {_FONT} {extra}>{escape(str(s))}</text>'


def heatmap(chart_id: str, models: list[str], angles: list[str], values: dict, title: str) -> str:
    """models × angles grid; `values[(model, angle)]` is a 0–100 score, a missing key is drawn as '—'."""
    left, top, cw, ch = 12 + 7 * max((len(m) for m in models), default=4), 28, 64, 30
    width = max(left + cw * max(1, len(angles)) + 10, left + 260)
    height = top + ch * max(1, len(models)) + 40
    body = [_text(left + j * cw + cw / 2, top - 8, a, "middle") for j, a in enumerate(angles)]
    legend_y = top + ch * max(1, len(models)) + 12
    body.append(_text(left - 6, legend_y + 10, "0", "end"))
    body += [f'<rect x="{left + k * 20}" y="{legend_y}" width="20" height="12" fill="{viridis(k * 10)}"/>' for k in range(11)]
    body.append(_text(left + 11 * 20 + 4, legend_y + 10, "100"))
    for i, model in enumerate(models):
        y = top + i * ch
        body.append(_text(left - 6, y + ch / 2 + 4, model, "end"))
        for j, angle in enumerate(angles):
            x = left + j * cw
            v = values.get((model, angle))
            if v is None or not math.isfinite(v):
                body.append(f'<rect x="{x}" y="{y}" width="{cw - 2}" height="{ch - 2}" fill="#eeeeee"><title>{escape(model)} {escape(angle)}: not scored</title></rect>')
                body.append(_text(x + cw / 2, y + ch / 2 + 4, "—", "middle", 'fill="#777777"'))
                continue
            ink = "#000000" if v > 55 else "#ffffff"
            body.append(f'<rect class="cell" x="{x}" y="{y}" width="{cw - 2}" height="{ch - 2}" fill="{viridis(v)}">'
                        f'<title>{escape(model)} {escape(angle)}: {v:.1f}</title></rect>')
            body.append(_text(x + cw / 2, y + ch / 2 + 4, f"{v:.1f}", "middle", f'fill="{ink}"'))
    return _svg(chart_id, width, height, body, title)


def grouped_bars(chart_id: str, groups: list[str], series: list[str], values: dict, intervals: dict, title: str) -> str:
    """Horizontal bars: one block per group (role), one bar per series (model), with CI whiskers."""
    label_w = 12 + 7 * max((len(g) for g in groups), default=4)
    bar_h, gap, plot_w = 14, 12, 360
    block = bar_h * max(1, len(series)) + gap
    legend_h = 20
    width = max(label_w + plot_w + 30, label_w + 110 * len(series))
    height = legend_h + 20 + block * max(1, len(groups)) + 24
    body = []
    for k, name in enumerate(series):
        lx = label_w + k * 110
        body.append(f'<rect x="{lx}" y="4" width="10" height="10" fill="{series_colour(k)}"/>')
        body.append(_text(lx + 14, 13, name))
    y0 = legend_h + 14
    for tick in range(0, 101, 25):
        x = label_w + plot_w * tick / 100
        body.append(f'<line x1="{x:.1f}" y1="{y0 - 4}" x2="{x:.1f}" y2="{height - 20}" stroke="#dddddd"/>')
        body.append(_text(x, height - 6, tick, "middle"))
    for g, group in enumerate(groups):
        gy = y0 + g * block
        body.append(_text(label_w - 6, gy + block / 2, group, "end"))
        for k, name in enumerate(series):
            v = values.get((group, name))
            y = gy + k * bar_h
            if v is None or not math.isfinite(v):
                continue
            body.append(f'<rect class="bar" x="{label_w}" y="{y}" width="{plot_w * max(0.0, v) / 100:.1f}" height="{bar_h - 2}" '
                        f'fill="{series_colour(k)}"><title>{escape(group)} · {escape(name)}: {v:.1f}</title></rect>')
            lo, hi = intervals.get((group, name), (math.nan, math.nan))
            if math.isfinite(lo) and math.isfinite(hi):
                cy = y + (bar_h - 2) / 2
                body.append(f'<line x1="{label_w + plot_w * lo / 100:.1f}" y1="{cy:.1f}" x2="{label_w + plot_w * hi / 100:.1f}" '
                            f'y2="{cy:.1f}" stroke="#222222" stroke-width="1.5"/>')
    return _svg(chart_id, width, height, body, title)


def boxplots(chart_id: str, angles: list[str], models: list[str], samples: dict, title: str) -> str:
    """Per angle, one box (quartiles, whiskers at 1.5 IQR clipped to the data, median line) per model."""
    left, top, plot_h = 40, 30, 200
    box_w, gap = 16, 18
    block = box_w * max(1, len(models)) + gap
    width = max(left + block * max(1, len(angles)) + 10, left + 110 * len(models))
    height = top + plot_h + 40

    def ypos(v):
        return top + plot_h * (1 - v / 100)

    body = []
    for k, name in enumerate(models):
        lx = left + k * 110
        body.append(f'<rect x="{lx}" y="4" width="10" height="10" fill="{series_colour(k)}"/>')
        body.append(_text(lx + 14, 13, name))
    for tick in range(0, 101, 25):
        body.append(f'<line x1="{left}" y1="{ypos(tick):.1f}" x2="{width - 10}" y2="{ypos(tick):.1f}" stroke="#dddddd"/>')
        body.append(_text(left - 4, ypos(tick) + 4, tick, "end"))
    for j, angle in enumerate(angles):
        bx = left + j * block + gap / 2
        body.append(_text(bx + box_w * len(models) / 2, top + plot_h + 18, angle, "middle"))
        for k, model in enumerate(models):
            vals = samples.get((model, angle))
            if vals is None or len(vals) == 0:
                continue
            q1, med, q3 = np.percentile(vals, [25, 50, 75])
            iqr = q3 - q1
            lo = float(np.min(vals[vals >= q1 - 1.5 * iqr]))
            hi = float(np.max(vals[vals <= q3 + 1.5 * iqr]))
            x, cx = bx + k * box_w, bx + k * box_w + (box_w - 4) / 2
            c = series_colour(k)
            body.append(f'<line x1="{cx:.1f}" y1="{ypos(hi):.1f}" x2="{cx:.1f}" y2="{ypos(lo):.1f}" stroke="{c}"/>')
            body.append(f'<rect class="box" x="{x:.1f}" y="{ypos(q3):.1f}" width="{box_w - 4}" height="{max(1.0, ypos(q1) - ypos(q3)):.1f}" '
                        f'fill="{c}" fill-opacity="0.35" stroke="{c}"><title>{escape(model)} {escape(angle)}: n={len(vals)}, '
                        f'median {med:.1f}, IQR {q1:.1f}–{q3:.1f}</title></rect>')
            body.append(f'<line x1="{x:.1f}" y1="{ypos(med):.1f}" x2="{x + box_w - 4:.1f}" y2="{ypos(med):.1f}" stroke="#222222" stroke-width="2"/>')
    return _svg(chart_id, width, height, body, title)
