"""Options and helpers shared by several commands."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.text import Text

from ..textsafe import escape_unsafe, python_escape
from .exit_codes import PIPE_CLOSED, ExitCode


def discard_stdout() -> None:
    """Point standard output at /dev/null once its reader has closed the pipe (`| head -1`): what is still
    buffered must not fail again at exit ("Exception ignored … BrokenPipeError" on stderr)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test runner's buffer): nothing to flush
        pass


class _Console(Console):
    """rich's Console, except that a closed pipe exits PIPE_CLOSED (141) like any shell tool, not 1 (FINDINGS)."""

    def on_broken_pipe(self) -> None:
        discard_stdout()
        raise SystemExit(PIPE_CLOSED)


# soft_wrap: a message is never hard-wrapped (the terminal wraps it), so it reads and greps the same at any width
console = _Console(stderr=True, soft_wrap=True)
out = _Console(soft_wrap=True)

OntologyOpt = typer.Option(None, "--ontology", help="YAML file merged over the default ontology.", exists=True, dir_okay=False)
WeightsOpt = typer.Option(None, "--weights", help="Weights YAML (e.g. from `vistar calibrate --fit`), merged over the ontology.", exists=True, dir_okay=False)
ModelPathOpt = typer.Option(None, "--model-path", metavar="NAME=PATH", help="Local path of a model weight (repeatable)")
PartialOkOpt = typer.Option(False, "--partial-ok", help="Exit 0 instead of 3 when the work completed with error rows or invalid prompts")

def printable(text: str) -> str:
    """`text` with every non-printable character written as a Python escape (`\\x1b`, `\\u202e`), so a file's
    bytes can never drive the terminal; line breaks and tabs of multi-line messages stay."""
    return escape_unsafe(text, python_escape, keep="\n\t")


def safe(text: object) -> str:
    """User-derived text ready for a rich print: non-printables escaped, `[...]` not read as markup."""
    return escape(printable(str(text)))


def say(message: object, style: str | None = None, *, to: Console = console) -> None:
    """One message naming user input (a file, a prompt, a problem), escaped and never hard-wrapped (the terminal
    wraps it, so the text stays searchable at any width); `style` colours the part before the first ': '.
    A Text, not markup: nothing in the message can open or close a style."""
    head, sep, rest = printable(str(message)).partition(": ")
    text = Text.assemble((head, style or ""), sep, rest) if sep else Text(head, style or "")
    to.print(text, highlight=False, soft_wrap=True)


FOLDED_MIN = 20  # a column with overflow="fold" (a path) keeps at least this width; its lines fold beyond it


def print_table(table, to: Console = out) -> None:
    """A table whose cells are never cut short (`0.2…`), so the numbers are the same at any width: every column
    keeps its widest cell whole except those declared `overflow="fold"` (a path), which fold onto more lines.
    When even that does not fit the terminal, the table is printed at the width it needs and the terminal wraps
    its lines. Tables are built to fit 80 columns."""
    wide = to.options.update_width(1000)
    natural = to.measure(table, options=wide).maximum
    if natural <= to.width:
        to.print(table)
        return
    spare = 0
    for column in table.columns:
        widest = max((Measurement.get(to, wide, cell).maximum for cell in (column.header, *column.cells)), default=0)
        if column.overflow == "fold":
            spare += max(0, widest - max(FOLDED_MIN, cell_len(str(column.header))))
        else:
            column.min_width = max(column.min_width or 0, widest)  # rich narrows the folding columns instead
    needed = natural - spare
    if needed <= to.width:
        to.print(table)
        return
    Console(file=to.file, width=needed, force_terminal=to.is_terminal, color_system=to.color_system).print(table)


def fail(message: str, code: int = ExitCode.USAGE) -> None:
    console.print(Text.assemble(("error:", "bold red"), " ", printable(str(message))), highlight=False, soft_wrap=True)
    raise typer.Exit(int(code))


def parse_model_paths(items: Optional[list[str]]) -> dict[str, str]:
    paths = {}
    for item in items or []:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            fail(f"--model-path expects NAME=PATH, got '{item}'")
        paths[name] = str(Path(path).expanduser())
    return paths


def parse_angles(text: Optional[str], known, option: str = "--angles") -> Optional[list[str]]:
    """Comma-separated angle codes, matched to the ontology's spelling whatever their case (`tr` is TR);
    an unknown code is a usage error before anything is written."""
    if text is None:
        return None
    by_fold = {code.casefold(): code for code in known}
    codes, unknown = [], []
    for part in (p.strip() for p in text.split(",")):
        if part:
            code = by_fold.get(part.casefold())
            (codes if code else unknown).append(code or part)
    if unknown:
        fail(f"{option}: unknown angle code(s) {', '.join(unknown)} (known: {', '.join(known)})")
    if not codes:
        fail(f"{option}: no angle code given (known: {', '.join(known)})")
    return list(dict.fromkeys(codes))
