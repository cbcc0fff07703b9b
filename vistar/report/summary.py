"""The few lines `vistar report` prints: which model is best overall and for each role, and how much of the
run the numbers cover (the files hold everything else)."""
from __future__ import annotations

from .tables import ReportData


def coverage_line(data: ReportData) -> str:
    a = data.angle_scores
    ok, error, skipped = (int(a[f"n_{s}"].sum()) for s in ("ok", "error", "skipped"))
    scored = sorted(set(a.loc[a.n_ok > 0, "angle"]), key=data.summary["angles"].index)
    return (f"{len(data.summary['models'])} model(s); angles scored: {', '.join(scored) or 'none'}; "
            f"angle rows: {ok} ok, {error} error, {skipped} skipped")


def best_overall(data: ReportData) -> str | None:
    """`B (62.1)`; tied leaders are all named."""
    leaders = _leaders(data.overall, "overall")
    return leaders and f"{', '.join(leaders[0])} ({leaders[1]:.1f})"


def best_per_role(data: ReportData) -> list[str]:
    """`GD Graphic Designer: B (65.0; 50%)` for each role with a score: the leader(s), their role score and the
    share of the role's weight it was computed on."""
    lines = []
    for role, sub in data.role_scores.groupby("role", sort=False):
        leaders = _leaders(sub, "score")
        if leaders is not None:
            covered = sub.loc[sub["model"].isin(leaders[0]), "covered_weight"].min()
            lines.append(f"{role} {sub['role_name'].iloc[0]}: {', '.join(leaders[0])} ({leaders[1]:.1f}; {covered:.0%})")
    return lines


def _leaders(frame, col: str) -> tuple[list[str], float] | None:
    scored = frame.dropna(subset=[col])
    if scored.empty:
        return None
    top = float(scored[col].max())
    return sorted(scored.loc[scored[col] >= top - 1e-9, "model"]), top
