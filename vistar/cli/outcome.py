"""How a `vistar score` run ended, as an exit code and one last line a script can read (docs/cli.md)."""
from __future__ import annotations

from .common import fail, out
from .exit_codes import ExitCode, partial_or_ok


def finish_score(summary, rows, partial_ok: bool) -> ExitCode:
    """NOTHING_SCORED (with the reason) when the run had nothing to score or resume; PARTIAL when its rows hold
    errors or prompts were invalid; OK otherwise. The last line printed carries the counts."""
    if summary.nothing_scored:  # run.json says so too (`status: nothing_scored`)
        fail(f"nothing to score: {summary.nothing_scored}", ExitCode.NOTHING_SCORED)
    counts = rows["status"].value_counts().to_dict() if not rows.empty else {}
    errors = int(counts.get("error", 0))
    invalid = sum(p["kind"] == "prompt_error" for p in summary.problems)
    status = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    code = partial_or_ok(bool(errors or invalid), partial_ok)
    if errors or invalid:
        what = f"{errors} error row{'s' * (errors != 1)}, {invalid} invalid prompt{'s' * (invalid != 1)}"
        line = f"partial: {what} (rows: {status}); exit {int(code)}"
    else:
        line = f"complete (rows: {status})"
    out.print(line, highlight=False, markup=False, soft_wrap=True)
    return code
