"""Report and calibration cost on synthetic data of a realistic size. Prints a table; asserts nothing.

    python benchmarks/bench_report.py                      # 200k angle rows, 20k judgments
    python benchmarks/bench_report.py --rows 1000000 --pairs 100000

Times `build_report_data` (means, bootstrap CIs, role scores, notes), the HTML rendering, and the pure
calibration statistics (PPA, acc23 with ε search, τ-b, each with bootstrap CIs) plus one TR weight fit.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

from vistar.calibration import acc23, bootstrap_ci, kendall_tau_b, ppa
from vistar.calibration.fit import fit_metric
from vistar.ontology import Ontology
from vistar.report.render import render_html
from vistar.report.tables import build_report_data


def synthetic_scores(n_rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    models = [f"model{i}" for i in range(8)]
    angles = ["TR", "LI", "CSE", "CPA", "PSC", "GC", "SF", "CUL", "MA"]
    model = rng.choice(models, n_rows)
    angle = rng.choice(angles, n_rows)
    status = rng.choice(["ok", "error", "skipped"], n_rows, p=[0.97, 0.02, 0.01])
    return pd.DataFrame({"image": [f"{m}/{i}.png" for i, m in enumerate(model)], "model": model, "angle": angle,
                         "metric": angle, "score": np.where(status == "ok", rng.uniform(0, 1, n_rows), np.nan),
                         "status": status, "error": np.where(status == "ok", None, "synthetic failure"),
                         "set": rng.choice(["core", "hard"], n_rows), "role": "GD", "details": "{}"})


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args()

    scores = synthetic_scores(args.rows)
    data, t_tables = timed(lambda: build_report_data(scores, Ontology.load(), resamples=args.resamples))
    _, t_html = timed(lambda: render_html(data, "bench"))

    rng = np.random.default_rng(1)
    h = rng.choice([-1, 0, 1], args.pairs, p=[0.45, 0.1, 0.45])
    d = np.round(0.3 * h + rng.normal(0, 0.5, args.pairs), 3)
    _, t_stats = timed(lambda: [bootstrap_ci(f, (h, d), 0, args.resamples) for f in (ppa, kendall_tau_b, lambda a, b: acc23(a, b)[0])])
    n = args.pairs
    details = {f"a{i}": json.dumps({"char": float(x), "token": float(y)}) for i, (x, y) in enumerate(rng.uniform(0, 1, (n, 2)))}
    details |= {f"b{i}": json.dumps({"char": float(x), "token": float(y)}) for i, (x, y) in enumerate(rng.uniform(0, 1, (n, 2)))}
    pairs = pd.DataFrame({"image_a": [f"a{i}" for i in range(n)], "image_b": [f"b{i}" for i in range(n)], "h": h})
    _, t_fit = timed(lambda: fit_metric("TR", pairs, details, {"w_char": 0.5}, ["w_char"], trials=60))

    print(f"{'step':<44}{'seconds':>10}")
    print(f"{f'report tables, {args.rows} rows, {args.resamples} resamples':<44}{t_tables:>10.2f}")
    print(f"{'report HTML rendering':<44}{t_html:>10.2f}")
    print(f"{f'PPA+tau-b+acc23 with CIs, {args.pairs} judgments':<44}{t_stats:>10.2f}")
    print(f"{f'TR fit, 60 trials, {args.pairs} judgments':<44}{t_fit:>10.2f}")


if __name__ == "__main__":
    main()
