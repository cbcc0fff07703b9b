"""`vistar bench`: latency/throughput per stage and metric, naive loop vs engine (see docs/bench.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from .common import ModelPathOpt, OntologyOpt, fail, out, parse_model_paths, print_table, say
from .exit_codes import os_error_code


def bench(
    prompts: Path = typer.Option(..., "--prompts", exists=True, dir_okay=False, help="Prompts whose angles select the metrics"),
    images: Optional[Path] = typer.Option(None, "--images", exists=True, file_okay=False, help="Real images (score layout); default: synthetic"),
    n: int = typer.Option(16, "--n", min=1, help="Images in the workload"),
    size: int = typer.Option(1024, "--size", min=32, help="Side of synthetic images"),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda, cuda:N, or auto (cuda when there is one): where the stages run"),
    batch_sizes: str = typer.Option("1,2,4,8", "--batch-sizes", help="Comma-separated batch sizes timed per stage"),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Timed repetitions per stage and batch size"),
    random_init: bool = typer.Option(False, "--random-init", help="Stages whose weights are absent use random-initialised full-size models"),
    model_scale: str = typer.Option("full", "--model-scale", 
                                     help="full, or tiny: every model a small random-initialised one of its architecture"),
    model_path: Optional[list[str]] = ModelPathOpt,
    ontology: Optional[Path] = OntologyOpt,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the full report here"),
    wide: bool = typer.Option(False, "--wide", help="Also print FLOPs, peak fraction and memory columns (over 80 columns)"),
) -> None:
    """Benchmark every feature stage and metric the prompts need."""
    from ..engine.bench import run_bench
    from ..engine.bench_inputs import load_items
    from ..engine.params import check_params
    from ..ontology import Ontology, OntologyError
    from ..runtime.device import resolve_device

    try:  # as `vistar score` does: a GPU the machine lacks is refused naming what was found, before any work
        used = resolve_device(device)
    except ValueError as exc:
        fail(str(exc))
    if model_scale not in ("full", "tiny"):
        fail(f"--model-scale must be full or tiny, not {model_scale!r}")
    if json_out and not json_out.parent.is_dir():   # checked before the benchmark runs, not after
        fail(f"--json {json_out}: folder {json_out.parent} does not exist")
    try:
        check_params(Ontology.load(ontology))   # a bad file fails here, before any image is made
        items = load_items(prompts, images, n, size)
        sizes = [int(b) for b in batch_sizes.split(",") if b.strip()]
        if not sizes or min(sizes) < 1:
            raise ValueError(f"--batch-sizes must be whole numbers of at least 1, not '{batch_sizes}'")
    except (OntologyError, ValueError) as exc:
        fail(str(exc))
    paths = parse_model_paths(model_path)
    try:
        report = run_bench(items, device=used, batch_sizes=sizes, repeats=repeats, ontology_file=ontology,
                           model_paths=paths, random_init=random_init, model_scale=model_scale)
    except (RuntimeError, ValueError) as exc:   # e.g. the timed run wrote other rows than the bench measured
        fail(f"the benchmark stopped: {exc}")
    report["fingerprint"]["device_requested"] = device
    if json_out:
        try:
            json_out.write_text(json.dumps(report, indent=2, default=str))
        except OSError as exc:
            fail(str(exc), os_error_code(exc))
    _print(report, wide)


def _fmt(value, spec=".1f") -> str:
    return "-" if value is None else format(value, spec)


def _print(report: dict, wide: bool = False) -> None:
    fp = report["fingerprint"]
    asked = f" (--device {fp['device_requested']})" if fp.get("device_requested", fp["device"]) != fp["device"] else ""
    out.print(f"device {fp['device']}{asked} · {fp['hardware'].get('gpu') or fp['hardware'].get('processor') or fp['hardware']['machine']}"
              f" · {fp['hardware']['cpu_count']} cpus · random_init={fp['random_init']}"
              f"{' · model scale ' + fp['model_scale'] if fp.get('model_scale', 'full') != 'full' else ''}", highlight=False)
    table = Table(title="feature stages (p50/p95 after a warm-up call; 1st = that call, model loading included)")
    columns = ["stage", "status", "p50 ms", "p95 ms", "1st ms", "img/s", "batch"]
    if wide:
        columns += ["GFLOP/img", "peak frac", "RSS MiB", "GPU MiB"]
    for col in columns:
        table.add_column(col, justify="left" if col in ("stage", "status") else "right")
    for s in report["stages"]:
        best = s["throughput"].get(s["best_batch"]) if s["best_batch"] else None
        status = "ok (random weights)" if s["status"] == "ok" and s.get("random_init") else s["status"]
        row = [s["name"], status,
               _fmt(s["p50_ms"]), _fmt(s["p95_ms"]), _fmt(s.get("first_call_ms"), ".0f"), _fmt(best), _fmt(s["best_batch"], "d")]
        if wide:
            row += [_fmt(s["flops_per_image"] and s["flops_per_image"] / 1e9, ".2f"), _fmt(s["peak_fraction"], ".1%"),
                    _fmt(s["peak_rss_mib"], ".0f"), _fmt(s["peak_gpu_mib"], ".0f")]
        table.add_row(*row)
    print_table(table)
    _notes(report["stages"], "name")   # why a stage was skipped: below the table, where a long reason can wrap
    _print_models(report["stages"])
    size = "full-size architecture, same FLOPs" if fp.get("model_scale", "full") == "full" else "tiny variant of the architecture"
    for stage, models in (fp.get("random_init_models") or {}).items():
        out.print(f"random_init: {stage} ran on random-initialised {', '.join(models)} ({size}; "
                  "outputs and metric values are meaningless)", highlight=False)
    metrics = Table(title="metrics (pure functions on precomputed features, timed after one warm-up call each)")
    for col in ("metric", "status", "p50 ms", "p95 ms", "1st ms"):
        metrics.add_column(col)
    for m in report["metrics"]:
        metrics.add_row(m["metric"], m["status"], _fmt(m.get("p50_ms"), ".3f"), _fmt(m.get("p95_ms"), ".3f"),
                        _fmt(m.get("first_call_ms"), ".1f"))
    print_table(metrics)
    _notes(report["metrics"], "metric")
    cmp_ = report["naive_vs_engine"]
    if not cmp_:
        out.print("naive-vs-engine comparison not run: some stages were skipped", highlight=False)
        return
    for line in naive_vs_engine_lines(cmp_):
        out.print(line, highlight=False)


def _print_models(stages: list[dict]) -> None:
    """Torch stages against their models' forward passes alone, at the best batch: what the work around the model costs."""
    rows = [s for s in stages if s.get("model_images_per_s")]
    if not rows:
        return
    table = Table(title="torch stages vs their model alone (best batch; host = stage time outside the model)")
    for col in ("stage", "precision", "batch", "img/s", "model img/s", "ratio", "host ms/img"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    for s in rows:
        table.add_row(s["name"], s["precision"], _fmt(s["best_batch"], "d"), _fmt(s["images_per_s"]),
                      _fmt(s["model_images_per_s"]), _fmt(s["model_ratio"], ".2f"), _fmt(s["host_ms_per_image"], ".2f"))
    print_table(table)


def _notes(entries: list[dict], key: str) -> None:
    for entry in entries:
        if entry["status"] != "ok" and entry.get("note"):
            say(f"  {entry[key]} {entry['status']}: {entry['note']}", to=out)


def naive_vs_engine_lines(cmp_: dict) -> list[str]:
    """What each side of the comparison includes, totals and steady-state rates: a user must not read a fixed
    per-run cost on a small workload as "the engine is slower"."""
    rows = ", ".join(f"{n} {status}" for status, n in sorted(cmp_["rows"].items()))
    calls = cmp_["stage_calls"]
    shared = ("nothing to share on this workload" if calls["naive"] == calls["engine"]
              else f"sharing saves {calls['naive'] - calls['engine']}")
    steady = (f"{cmp_['engine_steady_ips'] / cmp_['naive_steady_ips']:.2f}x"
              if cmp_.get("engine_steady_ips") and cmp_.get("naive_steady_ips") else "-")
    return [
        f"naive loop vs engine on {cmp_['images']} images; both on warm models, neither counts process start, "
        "imports or model loading:",
        f"  naive  {cmp_['naive_s']:.2f} s, steady {_fmt(cmp_.get('naive_steady_ips'), '.2f')} img/s: each (image, "
        "metric) decodes and computes its own features",
        f"  engine {cmp_['engine_end_to_end_s']:.2f} s, steady {_fmt(cmp_.get('engine_steady_ips'), '.2f')} img/s: "
        f"a whole `vistar score` run at batch {cmp_['engine_batch']} (planning, hashing, Parquet; {rows} rows)",
        f"  feature computations: naive {calls['naive']}, engine {calls['engine']} ({shared})",
        f"  speed-up {cmp_['speedup']:.2f}x end to end (the engine's fixed per-run cost included), {steady} steady",
    ]
