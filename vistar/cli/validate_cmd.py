"""`vistar validate`: every angle's held-out validity sets, one table (angle, set, n, measure, value, goal, met).

A goal that is not met is information, not a failure of the command: it exits 0 and states the shortfall and its
cause under the table; `--strict` exits 1 instead (for CI that must hold the goals). A set that cannot run at all
(a missing dependency, a crash) is a row with its error, and the command exits 3 after running the others.
"""
from __future__ import annotations

import json
import math
import textwrap
from typing import Optional

import typer

from ..validity import ANGLE_MODULES, ValidityRow, full_size, sets_for
from .common import out, parse_angles
from .exit_codes import ExitCode

COLUMNS = (("angle", 5, "<"), ("set", 18, "<"), ("n", 4, ">"), ("measure", 26, "<"), ("value", 7, ">"),
           ("goal", 9, "<"), ("met", 3, "<"))   # 72 characters + 6 separators: fits 80 columns


def _value(value: float) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def _line(cells) -> list[str]:
    """One row; a cell too long for its column wraps onto continuation lines instead of being cut."""
    wrapped = [textwrap.wrap(text, width, break_on_hyphens=False) or [""]
               for text, (_, width, _) in zip(cells, COLUMNS)]
    return [" ".join(f"{(parts[i] if i < len(parts) else ''):{align}{width}}"
                     for parts, (_, width, align) in zip(wrapped, COLUMNS)).rstrip()
            for i in range(max(map(len, wrapped)))]


def table(rows: list[ValidityRow]) -> str:
    """The rows as fixed-width text no wider than 80 characters, then one wrapped line per shortfall or error
    naming the set and the measures it explains (a cause shared by several rows of a set once)."""
    lines = _line([name for name, _, _ in COLUMNS]) + [" ".join("-" * width for _, width, _ in COLUMNS)]
    for r in rows:
        lines += _line((r.angle, r.set, str(r.n), r.measure, _value(r.value), r.goal, "yes" if r.met else "NO"))
    causes: dict[tuple[str, str, str], list[str]] = {}  # every unmet goal has a cause (ValidityRow checks)
    for r in rows:
        if not r.met:
            causes.setdefault((r.angle, r.set, r.note), []).append(r.measure)
    notes = [f"{angle} {name}{'' if measures == ['error'] else ', ' + ' and '.join(measures)}: {note}"
             for (angle, name, note), measures in causes.items()]
    if notes:
        lines.append("")
        lines += [textwrap.fill(n, 80, subsequent_indent="  ", break_on_hyphens=False) for n in notes]
    return "\n".join(lines)


def run_sets(angles: list[str], n: Optional[int], seed: int) -> tuple[list[ValidityRow], list[str]]:
    """Every set of ANGLES run once (N items, else the set's full size); returns the rows and the angles whose
    validity module is not installed. A set that raises becomes one error row and the others still run."""
    rows, unavailable = [], []
    for angle in angles:
        try:
            sets = sets_for(angle)
        except Exception as exc:  # noqa: BLE001 - an angle whose module cannot load is reported, the rest run
            rows.append(_error_row(angle, "(module)", 0, exc))
            continue
        if not sets:
            unavailable.append(angle)
        for name, run in sets.items():
            size = n or full_size(angle, name)
            try:
                rows += run(size, seed)
            except Exception as exc:  # noqa: BLE001 - one broken set must not hide the others' numbers
                rows.append(_error_row(angle, name, size, exc))
    return rows, unavailable


def _error_row(angle: str, name: str, n: int, exc: Exception) -> ValidityRow:
    return ValidityRow(angle, name, n, "error", math.nan, "-", False, f"error: {type(exc).__name__}: {exc}")


def validate(
    angles: Optional[str] = typer.Option(None, "--angles", help="Comma-separated angles (default: all: "
                                         + ",".join(a.upper() for a in ANGLE_MODULES) + ")"),
    n: Optional[int] = typer.Option(None, "--n", min=1, help="Items per set (default: each set's documented size; "
                                    "small values for a quick check)"),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed the sets are generated from"),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON instead of the table"),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when a goal is not met"),
) -> None:
    """Run the held-out validity sets of every angle and print one table of measured values against goals."""
    known = [a.upper() for a in ANGLE_MODULES]
    chosen = parse_angles(angles, known) or known
    rows, unavailable = run_sets(chosen, n, seed)
    if as_json:
        records = [{**r.record(), "value": r.value if math.isfinite(r.value) else None} for r in rows]
        out.print_json(json.dumps({"seed": seed, "rows": records, "unavailable": unavailable}))
    else:
        out.print(table(rows), highlight=False, markup=False, soft_wrap=True)
        if unavailable:
            out.print("no validity sets installed for: " + ", ".join(unavailable), highlight=False, markup=False)
    if any(r.measure == "error" for r in rows):
        raise typer.Exit(int(ExitCode.PARTIAL))
    if strict and (unavailable or not all(r.met for r in rows)):
        raise typer.Exit(int(ExitCode.FINDINGS))
