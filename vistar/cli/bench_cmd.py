"""`vistar bench`: latency/throughput per stage and metric, naive loop vs engine (see docs/bench.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from .common import OntologyOpt, fail, out, parse_model_paths


def bench(
    prompts: Path = typer.Option(..., "--prompts", exists=True, dir_okay=False, help="Prompts whose angles select the metrics"),
    images: Optional[Path] = typer.Option(None, "--images", exists=True, file_okay=False, help="Real images (score layout); default: synthetic"),
    n: int = typer.Option(16, "--n", min=1, help="Images in the workload"),
    size: int = typer.Option(1024, "--size", min=32, help="Side of synthetic images"),
    device: str = typer.Option("cpu", "--device"),
    batch_sizes: str = typer.Option("1,2,4,8", "--batch-sizes"),
    repeats: int = typer.Option(3, "--repeats", min=1),
    random_init: bool = typer.Option(False, "--random-init", help="Stages whose weights are absent use random-initialised full-size models"),
    model_path: Optional[list[str]] = typer.Option(None, "--model-path"),
    ontology: Optional[Path] = OntologyOpt,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the full report here"),
) -> None:
    """Benchmark every feature stage and metric the prompts need."""
    from ..engine.bench import run_bench
    from ..engine.bench_inputs import load_items
    from ..ontology import Ontology, OntologyError

    try:
        Ontology.load(ontology)   # a bad file fails here, before any image is made
        items = load_items(prompts, images, n, size)
        sizes = [int(b) for b in batch_sizes.split(",") if b.strip()]
    except (OntologyError, ValueError) as exc:
        fail(str(exc))
    paths = parse_model_paths(model_path)
    try:
        report = run_bench(items, device=device, batch_sizes=sizes, repeats=repeats, ontology_file=ontology,
                           model_paths=paths, random_init=random_init)
    except (RuntimeError, ValueError) as exc:   # e.g. the timed run wrote other rows than the bench measured
        fail(f"the benchmark stopped: {exc}")
    if json_out:
        json_out.write_text(json.dumps(report, indent=2, default=str))
    _print(report)


def _fmt(value, spec=".1f") -> str:
    return "-" if value is None else format(value, spec)


def _print(report: dict) -> None:
    fp = report["fingerprint"]
    out.print(f"device {fp['device']} · {fp['hardware'].get('gpu') or fp['hardware'].get('processor') or fp['hardware']['machine']}"
              f" · {fp['hardware']['cpu_count']} cpus · random_init={fp['random_init']}", highlight=False)
    table = Table(title="feature stages")
    for col in ("stage", "status", "p50 ms", "p95 ms", "best img/s", "best batch", "GFLOP/img", "peak frac", "RSS MiB", "GPU MiB"):
        table.add_column(col, justify="left" if col in ("stage", "status") else "right")
    for s in report["stages"]:
        best = s["throughput"].get(s["best_batch"]) if s["best_batch"] else None
        status = "ok (random weights)" if s["status"] == "ok" and s.get("random_init") else s["status"]
        table.add_row(s["name"], status if s["status"] == "ok" else f"{s['status']}: {s['note'][:60]}",
                      _fmt(s["p50_ms"]), _fmt(s["p95_ms"]), _fmt(best), _fmt(s["best_batch"], "d"),
                      _fmt(s["flops_per_image"] and s["flops_per_image"] / 1e9, ".2f"), _fmt(s["peak_fraction"], ".1%"),
                      _fmt(s["peak_rss_mib"], ".0f"), _fmt(s["peak_gpu_mib"], ".0f"))
    out.print(table)
    for stage, models in (fp.get("random_init_models") or {}).items():
        out.print(f"random_init: {stage} ran on random-initialised {', '.join(models)} (full-size architecture, same FLOPs; "
                  "outputs and metric values are meaningless)", highlight=False)
    metrics = Table(title="metrics (pure functions on precomputed features)")
    for col in ("metric", "status", "p50 ms", "p95 ms"):
        metrics.add_column(col)
    for m in report["metrics"]:
        metrics.add_row(m["metric"], m["status"] if m["status"] == "ok" else f"skipped: {m['note']}",
                        _fmt(m.get("p50_ms"), ".3f"), _fmt(m.get("p95_ms"), ".3f"))
    out.print(metrics)
    cmp_ = report["naive_vs_engine"]
    if cmp_:
        rows = ", ".join(f"{n} {status}" for status, n in sorted(cmp_["rows"].items()))
        out.print(f"naive loop {cmp_['naive_s']:.2f} s vs engine end to end {cmp_['engine_end_to_end_s']:.2f} s "
                  f"(vistar score, batch {cmp_['engine_batch']}; {rows} rows) on {cmp_['images']} images: "
                  f"speed-up {cmp_['speedup']:.2f}x", highlight=False)
    else:
        out.print("naive-vs-engine comparison not run: some stages were skipped", highlight=False)
