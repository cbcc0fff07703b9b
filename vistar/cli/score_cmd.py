"""`vistar score IMAGES --prompts FILE --out RUN_DIR`: score a folder of generated images."""
from __future__ import annotations

import signal
from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from ..engine.outcome import RunIOError
from ..engine.runner import RunLocked, ScoreConfig, run_score
from ..engine.shards import parse_shard
from ..ontology import Ontology, OntologyError
from ..runtime.device import resolve_device
from . import judge_options as judge_cli
from .common import ModelPathOpt, OntologyOpt, PartialOkOpt, WeightsOpt, console, fail, out, parse_angles, parse_model_paths, say
from .exit_codes import ExitCode, interrupted_code, os_error_code
from .outcome import finish_score
from .summary import print_not_scored, print_summary


def print_problems(problems: list[dict], out_dir: Path, per_kind: int = 10) -> None:
    """The first few problems of each kind (a run over a million images can have thousands); all are in problems.jsonl."""
    from collections import Counter

    shown: Counter = Counter()
    for problem in problems:
        shown[problem["kind"]] += 1
        if shown[problem["kind"]] <= per_kind:
            item, message = str(problem["item"]), str(problem["message"])
            what = message if item in message else f"{item}: {message}"  # name the file/prompt once
            say(f"{problem['kind']}: {what}", "yellow")
    hidden = {k: n - per_kind for k, n in shown.items() if n > per_kind}
    if hidden:
        more = ", ".join(f"{n} more {k}" for k, n in sorted(hidden.items()))
        say(f"{more}: see {out_dir / 'problems.jsonl'}", "yellow")


def check_executor(executor: str, ray_address: str | None) -> None:
    """--executor and --ray-address, checked before the run folder exists (a missing Ray names its extra)."""
    from ..engine.executors import EXECUTORS

    if executor not in EXECUTORS:
        fail(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if ray_address is not None and executor != "ray":
        fail("--ray-address needs --executor ray")
    if executor == "ray":
        from ..engine.executors.ray_exec import import_ray

        try:
            import_ray(ray_address)
        except ValueError as exc:
            fail(str(exc))


def score(
    images: Path = typer.Argument(..., exists=True, file_okay=False, metavar="IMAGES", help="IMAGES/<model>/<prompt_id>[_<k>].<ext>"),
    prompts: Optional[Path] = typer.Option(None, "--prompts", exists=True, dir_okay=False, help=".vistar or .jsonl prompt file (or use --suite)"),
    out_dir: Path = typer.Option(..., "--out", file_okay=False, help="Run directory (created; rerun to resume)"),
    angles: Optional[str] = typer.Option(None, "--angles", help="Comma-separated angle codes to score, e.g. TR,LI"),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda, cuda:N, or auto (cuda when there is one)"),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Images scored together by each feature stage"),
    workers: int = typer.Option(0, "--workers", min=0, help="Image-decoding worker processes (0: decode in-process)"),
    prefetch: int = typer.Option(2, "--prefetch", min=0, help="Batches decoded ahead of the one being scored (0: decode on demand)"),
    executor: str = typer.Option("local", "--executor", help="local (this machine) or ray (a Ray cluster; pip install 'vistar[ray]')"),
    cpu_workers: Optional[int] = typer.Option(None, "--cpu-workers", min=1, help="Scoring processes (local) or actors (ray); default: usable cores"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="--executor ray: auto or HOST:PORT of a running cluster (default: start Ray here)"),
    ontology: Optional[Path] = OntologyOpt,
    weights: Optional[Path] = WeightsOpt,
    manifest: Optional[Path] = typer.Option(None, "--manifest", exists=True, dir_okay=False, help="CSV with image,prompt_id,model"),
    model_path: Optional[list[str]] = ModelPathOpt,
    max_pixels: int = typer.Option(64_000_000, "--max-pixels", min=1, help="Largest decoded image accepted"),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="Re-score rows that ended in status=error"),
    verify: bool = typer.Option(False, "--verify", help="Re-hash every image instead of trusting the hash cache"),
    shard: Optional[str] = typer.Option(None, "--shard", help="K/N: score only shard K of N (one run per machine; then `vistar merge`)"),
    judge_url: Optional[str] = judge_cli.JudgeUrlOpt,
    judge_model: Optional[str] = judge_cli.JudgeModelOpt,
    judge_key_env: Optional[str] = judge_cli.JudgeKeyEnvOpt,
    judge_mode: Optional[str] = judge_cli.JudgeModeOpt,
    judge_config: Optional[Path] = judge_cli.JudgeConfigOpt,
    judge_cache_only: bool = judge_cli.JudgeCacheOnlyOpt,
    hwpq_dir: Optional[Path] = judge_cli.HwpqDirOpt,
    suite: Optional[str] = judge_cli.SuiteOpt,
    data_dir: Optional[Path] = judge_cli.DataDirOpt,
    upstream: Optional[Path] = judge_cli.UpstreamOpt,
    partial_ok: bool = PartialOkOpt,
) -> None:
    """Score every image against its prompt's angle; resumable, crash-safe."""
    import sys

    from ..vlm import suite_run  # the judge layer loads its protocols: only when a run starts

    try:  # a GPU the machine lacks is refused here, naming what was found; a --ray-address run's GPUs are the
        if ray_address is None:  # cluster's, which run_score checks before it writes anything
            resolve_device(device)
        else:
            from ..engine.executors.ray_exec import check_cluster_device

            check_cluster_device(device)
    except ValueError as exc:
        fail(str(exc))
    if (prompts is None) == (suite is None):
        fail("pass exactly one of --prompts FILE or --suite NAME")
    try:  # every option is checked here, before the run folder exists (a refused run leaves nothing behind)
        onto = Ontology.load(ontology, overrides=[weights] if weights else None)
    except OntologyError as exc:
        fail(str(exc))
    wanted_angles = parse_angles(angles, onto.angles)
    model_paths = parse_model_paths(model_path)
    check_executor(executor, ray_address)
    try:
        parsed_shard = parse_shard(shard) if shard is not None else None
        options = suite_run.judge_options(judge_url, judge_model, judge_key_env, judge_mode, judge_config,
                                          judge_cache_only, hwpq_dir, data_dir, upstream)
        recorded: dict = {}
        if suite:
            prepared = suite_run.prepare_suite(suite, data_dir, out_dir, upstream, options)
            prompts, recorded = prepared.prompts, prepared.recorded
            for problem in prepared.problems:
                say(f"suite_item: {problem}", "yellow")
    except OSError as exc:  # a judge config or suite file that cannot be read, a suite copy that cannot be written
        fail(str(exc), os_error_code(exc))
    except (KeyError, ValueError) as exc:
        fail(str(exc))
    cfg = ScoreConfig(images=images, prompts=prompts, out=out_dir, device=device, batch_size=batch_size,
                      workers=workers, prefetch=prefetch, ontology=ontology, weights=weights, manifest=manifest,
                      angles=wanted_angles, model_paths=model_paths, max_pixels=max_pixels, retry_errors=retry_errors,
                      verify=verify, options=suite_run.run_options(options), judge_ledger=options.get("judge_ledger"),
                      command=" ".join(["vistar", *sys.argv[1:]]), shard=parsed_shard, executor=executor, cpu_workers=cpu_workers,
                      ray_address=ray_address, recorded=recorded)
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("scoring images", total=None)
        try:
            summary = run_score(cfg, progress=lambda done, total: bar.update(task, completed=done, total=total))
        except RunIOError as exc:  # the disk filled up, or the folder became read-only, during the run
            fail(str(exc), ExitCode.IO_FAILURE)
        except OSError as exc:  # before the run began: --out cannot be created (permission, read-only disk)
            fail(str(exc), os_error_code(exc))
        except (RunLocked, OntologyError, ValueError) as exc:
            fail(str(exc))
        except KeyboardInterrupt as exc:  # the app exits 128 + the signal's number (docs/cli.md)
            name = signal.Signals(interrupted_code(exc) - 128).name
            say(f"interrupted by {name}: rows scored so far are kept; rerun the same command to finish {out_dir}",
                "yellow")
            raise
    print_problems(summary.problems, out_dir)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(summary.rows_by_status.items())) or "nothing new"
    out.print(f"scored {summary.scored} rows ({statuses}); {summary.reused} already in {out_dir}", highlight=False,
              markup=False, soft_wrap=True)
    frame = print_summary(out_dir)
    suite_run.after_run(out_dir, options, suite, lambda line: say(line, to=out))  # names models: user text
    print_not_scored(frame)
    raise typer.Exit(int(finish_score(summary, frame, partial_ok)))

