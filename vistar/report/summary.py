"""The few lines `vistar report` prints: which model is best overall and for each role, and how much of the
run the numbers cover (the files hold everything else)."""
from __future__ import annotations

import math

from .tables import ReportData


def coverage_line(data: ReportData) -> str:
    a = data.angle_scores
    ok, error, skipped = (int(a[f"n_{s}"].sum()) for s in ("ok", "error", "skipped"))
    scored = sorted(set(a.loc[a.n_ok > 0, "angle"]), key=data.summary["angles"].index)
    return (f"{len(data.summary['models'])} model(s); angles scored: {', '.join(scored) or 'none'}; "
            f"angle rows: {ok} ok, {error} error, {skipped} skipped")


def best_overall(data: ReportData) -> str | None:
    """`B (62.1)`; tied leaders are all named."""
    return _leaders(data.overall, "overall")


def best_per_role(data: ReportData) -> list[tuple[str, str, str, str]]:
    """(role, role name, best model(s) with score, covered share of the role's weight) for roles with a score."""
    rows = []
    for role, sub in data.role_scores.groupby("role", sort=False):
        leaders = _leaders(sub, "score")
        if leaders is None:
            continue
        covered = sub.loc[sub["rank"] == 1, "covered_weight"].min()
        rows.append((role, str(sub["role_name"].iloc[0]), leaders, f"{covered:.0%}"))
    return rows


def _leaders(frame, col: str) -> str | None:
    scored = frame.dropna(subset=[col])
    if scored.empty:
        return None
    top = scored[col].max()
    names = sorted(scored.loc[scored[col] >= top - 1e-9, "model"])
    return f"{', '.join(names)} ({top:.1f})" if math.isfinite(top) else None
