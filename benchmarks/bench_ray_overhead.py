"""Where Ray's time goes in `--executor ray` on one machine, apart from the stages: starting and stopping the
instance, its daemons' own CPU, one actor call against one process-pool task, and what a batch pickles.

    python benchmarks/bench_ray_overhead.py [--cpus 2] [--calls 400] [--posters 4]

- `ray.init` / `ray.shutdown` seconds for an instance like a run's own (no dashboard, loopback, N CPUs);
- the instance's daemons' CPU (GCS, raylet, agents, monitors; /proc utime + stime) while idle, per second;
- a round trip of a no-op call with 2 in flight per worker: N Ray actors against N `forkserver` pool processes;
- per planned batch of `--posters` 1024² TR posters (batch 4 by default): bytes and milliseconds of pickling the
  jobs as the executor sends them, the run's setup, and the reports (rows) that come back.
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])   # utime, stime (clock ticks)
    return total / os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return sorted(found)


def noop(x: bytes) -> bytes:
    return x


def round_trips(submit, n: int, workers: int) -> float:
    """Seconds per call of N no-op calls, 2 in flight per worker, collected in order (as the executors do)."""
    pending, start = [], time.perf_counter()
    for k in range(n):
        pending.append(submit(b"x" * 200))
        if len(pending) >= 2 * workers:
            pending.pop(0)()
    for wait in pending:
        wait()
    return (time.perf_counter() - start) / n


def batch_bytes(posters: int) -> list[str]:
    """The bytes and pickling time of one planned batch's jobs, the run's setup and the batch's reports, from a
    real one-process TR run over POSTERS posters in one batch."""
    from benchmarks.bench_executor import posters as make_posters
    from vistar.engine.executors import local
    from vistar.engine.executors.ray_stages import InFlight, dumps
    from vistar.engine.executors.work import BatchReport, WorkerSetup, pack
    from vistar.engine.runner import ScoreConfig, run_score

    seen = {}

    def keep(batch, images, ctx, ontology, timings=None):
        seen["rows"] = real(batch, images, ctx, ontology, timings=timings)
        seen["batch"], seen["ctx"], seen["ontology"] = batch, ctx, ontology
        return seen["rows"]

    real, local.score_batch = local.score_batch, keep
    with tempfile.TemporaryDirectory() as tmp:
        root = make_posters(Path(tmp) / "tr", posters)
        cfg = ScoreConfig(images=root / "images", prompts=root / "prompts.vistar", out=Path(tmp) / "run",
                          batch_size=posters, cpu_workers=1)
        run_score(cfg)
        local.score_batch = real
        start = time.perf_counter()
        state = dumps(InFlight(pack(seen["batch"])))
        sent_ms = 1000 * (time.perf_counter() - start)
        start = time.perf_counter()
        reports = pickle.dumps([BatchReport([], stage_seconds={"decode": 0.1, "ocr": 1.0}), BatchReport(seen["rows"])])
        back_ms = 1000 * (time.perf_counter() - start)
        setup = pickle.dumps(WorkerSetup.of_run(cfg, seen["ctx"], seen["ontology"]))
    return [f"| jobs sent per batch ({posters} images) | {len(state):,} | {sent_ms:.2f} |",
            f"| reports back per batch | {len(reports):,} | {back_ms:.2f} |",
            f"| the run's setup (once per run; each actor fetches it once) | {len(setup):,} | – |"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--posters", type=int, default=4)
    args = ap.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_worker_niceness", "0")
    import ray

    start = time.perf_counter()
    ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    init_s = time.perf_counter() - start
    time.sleep(2)
    daemons = descendants(os.getpid())
    before, t0 = cpu_seconds(daemons), time.perf_counter()
    time.sleep(10)
    idle = (cpu_seconds(daemons) - before) / (time.perf_counter() - t0)

    actor = ray.remote(num_cpus=1)(type("Noop", (), {"run": lambda self, x: x}))
    actors = [actor.remote() for _ in range(args.cpus)]
    ray.get([a.run.remote(b"") for a in actors])   # started
    turn = iter(range(10**9))

    def ray_submit(x):
        ref = actors[next(turn) % len(actors)].run.remote(x)
        return lambda: ray.get(ref)

    ray_call = round_trips(ray_submit, args.calls, args.cpus)
    busy = cpu_seconds(descendants(os.getpid()))
    start = time.perf_counter()
    ray.shutdown()
    shutdown_s = time.perf_counter() - start
    with ProcessPoolExecutor(args.cpus, mp_context=get_context("forkserver")) as pool:
        list(pool.map(noop, [b""] * args.cpus))

        def pool_submit(x):
            return pool.submit(noop, x).result

        pool_call = round_trips(pool_submit, args.calls, args.cpus)
    print(f"Ray {ray.__version__}, {args.cpus} CPUs, on {os.cpu_count()} visible CPUs; 1-minute load {os.getloadavg()[0]:.1f}\n")
    print("| what | value |\n|---|---:|")
    print(f"| `ray.init` (own instance) | {init_s:.2f} s |\n| `ray.shutdown` | {shutdown_s:.2f} s |")
    print(f"| daemons' CPU while idle | {100 * idle:.1f} % of a core ({len(daemons)} processes) |")
    print(f"| CPU of the instance's processes up to shutdown | {busy:.1f} s |")
    print(f"| no-op actor call, 2 in flight per actor | {1000 * ray_call:.2f} ms |")
    print(f"| no-op pool task, 2 in flight per process | {1000 * pool_call:.2f} ms |\n")
    print("| pickled | bytes | ms |\n|---|---:|---:|")
    print("\n".join(batch_bytes(args.posters)))


if __name__ == "__main__":
    main()
