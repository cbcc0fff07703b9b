"""How a `vistar score` run ended, as an exit code and one last line a script can read (docs/cli.md)."""
from __future__ import annotations

from .common import fail, out, printable
from .exit_codes import ExitCode, partial_or_ok


def finish_score(summary, cfg, rows, partial_ok: bool) -> ExitCode:
    """NOTHING_SCORED (with the reason) when the run had nothing to score or resume; PARTIAL when its rows hold
    errors or prompts were invalid; OK otherwise. The last line printed carries the counts."""
    if summary.scored == 0 and summary.reused == 0:
        fail(f"nothing to score: {nothing_reason(summary, cfg)}", ExitCode.NOTHING_SCORED)
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


def nothing_reason(summary, cfg) -> str:
    """Why a run had nothing to work on, in the order a user would check: the prompts, the angles, the images."""
    scope, prompts_file = summary.scope, printable(str(cfg.prompts))
    broken = sum(p["kind"] == "prompt_error" for p in summary.problems)
    if not scope.get("prompts") and not broken:
        return f"{prompts_file} holds no prompt (empty, or only blank and # comment lines)"
    if not scope.get("prompts"):
        return f"no prompt of {prompts_file} could be used: {broken} error(s) above (`vistar dsl check FILE`)"
    if not scope.get("wanted_prompts"):
        found = ", ".join(f"{angle} ({n})" for angle, n in scope.get("angles", {}).items())
        return f"no prompt has the requested angle(s) {', '.join(cfg.angles or [])}; the prompts' angles: {found}"
    if cfg.shard is not None and scope.get("matched_images"):
        return f"shard {cfg.shard} holds none of the {scope['matched_images']} matched images"
    images = printable(str(cfg.images))
    unmatched = scope.get("unmatched_images", 0)
    found = f"; {unmatched} image file(s) match no prompt id (listed above)" if unmatched else "; no image file found"
    if cfg.manifest is not None:
        return f"no row of the manifest {printable(str(cfg.manifest))} names an image of a prompt of the run{found}"
    return (f"no image matched a prompt: expected {images}/<model>/<prompt-id>.png "
            f"(or <prompt-id>_<k>.<ext> for sample k){found}")
