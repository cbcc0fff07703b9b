"""Executors: images/s of `vistar score` in one process on one core, over `--cpu-workers N` processes, and on a
local Ray instance with N CPUs, for TR on rendered 1024² posters and for a mixed TR/LI/CPA/GC workload.

    python benchmarks/bench_executor.py                     # 120 posters, 96 mixed images, N = 2: prints markdown
    python benchmarks/bench_executor.py --posters 40 --mixed 24 --workers 4 --no-ray --repeat 1
    python benchmarks/bench_executor.py --attach            # also through `--ray-address` to a running one-node cluster

TR uses the real RapidOCR models (shipped with rapidocr), CPA the real MediaPipe ones; LI and GC run their real
stages on tiny random-init YOLO-seg and DPT checkpoints (the repository's test builders), so their detector
cost is far below the real models': the mixed numbers measure the executors, not a real GC/LI deployment.

Each configuration is one whole `vistar score` in a fresh process into a fresh run folder, its CPU affinity set
to the cores it may use: the baseline ("one process, one core") to one core, so the libraries' own threads and
the decode-ahead thread cannot borrow a second one; "one process" is the same command on N cores, as a user runs
`--cpu-workers 1`; the pool and Ray get N cores. Each configuration scores the workload twice, all of its images
and its first half (a folder of their own), `--repeat` times (3), and the fastest wall of each counts (load from
other processes only ever slows a run, and a difference of two walls magnifies it). Two rates:

- images/s: the images over the whole run's wall (imports, planning, hashing, model loading in every worker,
  starting the Ray instance, Parquet writes and compaction included): what a run this short costs;
- steady images/s: the extra images of the whole run over its extra seconds, (N - N/2) / (wall(N) - wall(N/2)):
  everything paid once per run cancels, so this is the rate a long run keeps. `start-up s` = wall(N) - N /
  steady rate, what the run pays once.

A third table sets each Ray run against the pool on the same cores: steady and whole-run rates as ratios, and
what Ray paid before the first batch (run.json's `executor.startup_seconds`): starting the run's own instance
(`ray_start_s`) or connecting to a running cluster (`--attach`: `ray_connect_s`; the cluster is a `ray start
--head` on 127.0.0.1 with N CPUs, started before the runs and stopped after them), then the seconds from the
executor's start to the first batch's rows (`first_batch_s`, model loading in the actors included).

Utilisation per stage = seconds the stage ran, summed over workers, over (wall seconds × workers): the stage with
the largest share bounds the run. A stage's seconds include its lazy model loading (and library imports) in
each worker; what is left to 100 % is process start, planning, decoding in the one-process loop's background
thread, and idle time (measured on the whole run).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tiny checkpoint builders live in tests/

PHRASES = ["GRAND OPENING", "HANDLE WITH CARE", "FRESH BREAD DAILY", "NO PARKING ANY TIME", "SUMMER SALE 50% OFF",
           "OPEN 24 HOURS", "MIND THE GAP", "WELCOME TO THE JUNGLE", "LIVE MUSIC TONIGHT", "KEEP OFF THE GRASS"]


def posters(root: Path, n: int) -> Path:
    from vistar.synth.text import render_text

    (root / "images" / "m").mkdir(parents=True)
    lines = []
    for i in range(n):
        text = f"{PHRASES[i % len(PHRASES)]} {i}"
        render_text(text, size=1024, font_size=56 + 8 * (i % 4), background=(245 - 3 * (i % 7), 240, 230 + i % 9),
                    seed=i).save(root / "images" / "m" / f"t{i}.png")
        lines.append(f't{i}: [GD|TR] A poster that says "{text}"')
    (root / "prompts.vistar").write_text("\n".join(lines) + "\n")
    return root


def mixed(root: Path, n: int) -> tuple[Path, dict]:
    """n images, a quarter each of TR (512² posters), LI (240×320 lit scenes), CPA (512² photo), GC (96×128)."""
    from skimage import data

    from tests.support.tiny_checkpoints import save_tiny_dpt, save_tiny_yolo_seg
    from vistar.synth.lighting import sample_scene
    from vistar.synth.scenes import scene_pair
    from vistar.synth.text import render_text

    weights = {"dpt-hybrid-midas": str(save_tiny_dpt(root / "w" / "dpt")),
               "yolov8l-seg": str(save_tiny_yolo_seg(root / "w" / "yolo"))}
    person = Image.fromarray(data.astronaut())
    folder = root / "images" / "m"
    folder.mkdir(parents=True)
    lines = []
    for i in range(n):
        kind = ("TR", "LI", "CPA", "GC")[i % 4]
        if kind == "TR":
            text = f"{PHRASES[i % len(PHRASES)]} {i}"
            image = render_text(text, size=512, font_size=32, seed=i)
            lines.append(f'x{i}: [GD|TR] A poster that says "{text}"')
        elif kind == "LI":
            image = Image.fromarray(sample_scene([-0.94, 0.34, 0.2 * (i % 3)], seed=i).image)
            lines.append(f"x{i}: [PH|LI] three wooden blocks on a floor, low light from the left")
        elif kind == "CPA":
            image = person.rotate(3 * (i % 5)).resize((512, 512))
            lines.append(f"x{i}: [MS|CPA] an astronaut {{count=1}}")
        else:
            image = Image.fromarray(scene_pair(i, 96, 128)[i % 2].image)
            lines.append(f"x{i}: [GA|GC] a stone archway over a path")
        image.save(folder / f"x{i}.png")
    (root / "prompts.vistar").write_text("\n".join(lines) + "\n")
    return root, weights


def first_half(root: Path) -> Path:
    """A workload of the first half of `root`'s prompts and their images (hard links), beside it."""
    half = root.with_name(root.name + "-half")
    prompts = (root / "prompts.vistar").read_text().splitlines()
    lines = prompts[:len(prompts) // 2]
    (half / "images" / "m").mkdir(parents=True)
    for line in lines:
        name = line.split(":", 1)[0] + ".png"
        os.link(root / "images" / "m" / name, half / "images" / "m" / name)
    (half / "prompts.vistar").write_text("\n".join(lines) + "\n")
    return half


def run(root: Path, out: Path, weights: dict, cores: set[int], *options: str, env: dict | None = None) -> dict:
    """One `vistar score` in a fresh process on `cores`, so imports, model loading (in every worker) and, for Ray,
    starting the Ray instance are paid as a user pays them; `load` is the machine's 1-minute load average before it."""
    paths = [arg for name, path in weights.items() for arg in ("--model-path", f"{name}={path}")]
    cmd = [str(Path(sys.executable).parent / "vistar"), "score", str(root / "images"), "--prompts",
           str(root / "prompts.vistar"), "--out", str(out), "--batch-size", "4", *paths, *options]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, cores),
                          env={**os.environ, **(env or {})})
    wall = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    meta = json.loads((out / "run.json").read_text())
    return {"wall": wall, "load": load, "cores": len(cores), "rows": meta["counts"], "startup_seconds": {}, **meta["executor"]}


def report(name: str, n: int, results: dict, halves: dict) -> tuple[list[str], list[str]]:
    """The workload's rows of the markdown throughput table and of the utilisation table."""
    steady = {label: (n - n // 2) / (r["wall"] - halves[label]["wall"]) if r["wall"] > halves[label]["wall"] else None
              for label, r in results.items()}
    base = next(iter(results))
    throughput, utilisation = [], []
    for k, (label, r) in enumerate(results.items()):
        first = name if k == 0 else ""
        rows = ", ".join(f"{v} {s}" for s, v in sorted(r["rows"].items()) if s in ("ok", "error", "skipped"))
        rate = steady[label]
        rates = (f"{rate:.2f} | {rate / steady[base]:.2f}× | {r['wall'] - n / rate:.1f}"
                 if rate and steady[base] else "– | – | –")
        throughput.append(f"| {first} | {label} | {r['cores']} | {r['workers']} | {halves[label]['wall']:.1f} | "
                          f"{r['wall']:.1f} | {r['load']:.1f} | {n / r['wall']:.2f} | "
                          f"{results[base]['wall'] / r['wall']:.2f}× | {rates} | {rows} |")
        capacity = r["wall"] * max(1, r["workers"])
        shares = sorted(r["stage_seconds"].items(), key=lambda kv: -kv[1])
        used = ", ".join(f"{s} {100 * v / capacity:.0f} %" for s, v in shares if v / capacity >= 0.005)
        utilisation.append(f"| {first} | {label} | {used} |")
    return throughput, utilisation


def against_pool(name: str, n: int, results: dict, halves: dict, pool: str) -> list[str]:
    """The workload's rows of the Ray-against-the-pool table."""
    def steady(label: str) -> float | None:
        extra = results[label]["wall"] - halves[label]["wall"]
        return (n - n // 2) / extra if extra > 0 else None

    rows = []
    for label, r in results.items():
        if "ray" not in label:
            continue
        mine, base = steady(label), steady(pool)
        ratio = f"{mine / base:.2f}×" if mine and base else "–"
        paid = ", ".join(f"{k} {v:.1f}" for k, v in r["startup_seconds"].items()) or "–"
        rows.append(f"| {name} | {label} | {ratio} | {results[pool]['wall'] / r['wall']:.2f}× | {paid} |")
    return rows


@contextlib.contextmanager
def loopback_cluster(cpus: int, allowed: set[int]) -> Iterator[tuple[str, dict]]:
    """A one-node Ray cluster on 127.0.0.1 with CPUS CPUs on the cores ALLOWED: its address and the environment a
    driver needs (its token); stopped after (SIGTERM
    to its `ray start --block`, then SIGKILL to what is left of the session it started in)."""
    import secrets
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16), "RAY_USAGE_STATS_ENABLED": "0"}
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"} | token
    env["RAY_worker_niceness"] = "0"   # as a run's own instance (docs/scaling.md): workers at the pool's niceness
    start = [sys.executable, str(Path(__file__).resolve().parents[1] / "tests" / "support" / "ray_loopback_start.py"), "start",
             "--head", "--port", str(port), "--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus),
             "--include-dashboard", "false", "--temp-dir", tempfile.mkdtemp(prefix="vr", dir="/tmp"), "--block"]
    node = subprocess.Popen(start, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: os.sched_setaffinity(0, allowed))
    address = f"127.0.0.1:{port}"
    try:
        probe = "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); print(ray.cluster_resources()['CPU'])"
        driver = env | {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}   # a driver on loopback only, as the runs' drivers
        for _ in range(30):
            if node.poll() is not None:   # `ray start` itself failed: no cluster will answer
                raise SystemExit(f"`ray start` exited with {node.returncode}: {' '.join(start)}")
            try:
                if subprocess.run([sys.executable, "-c", probe, address], capture_output=True, env=driver, timeout=60).returncode == 0:
                    break
            except subprocess.TimeoutExpired:
                pass
            time.sleep(2)
        else:
            raise SystemExit(f"the Ray cluster at {address} did not answer")
        yield address, token
    finally:
        node.terminate()
        try:
            node.wait(timeout=30)
        except subprocess.TimeoutExpired:
            node.kill()
        for entry in Path("/proc").iterdir():   # what is left of the session `ray start` began
            try:
                if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3]) == node.pid:
                    os.kill(int(entry.name), 9)
            except (OSError, ValueError):
                continue


def machine() -> str:
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor() or platform.machine()
    return f"{model}, {os.cpu_count()} CPUs visible, {len(os.sched_getaffinity(0))} usable"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--posters", type=int, default=120, help="TR workload size (1024² posters; 0 skips it)")
    ap.add_argument("--mixed", type=int, default=96, help="mixed TR/LI/CPA/GC workload size (0 skips it)")
    ap.add_argument("--workers", type=int, default=2, help="processes of the pool, CPUs of the Ray instance")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray executor")
    ap.add_argument("--attach", action="store_true", help="also run Ray through --ray-address to a running local cluster")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each configuration and size; the fastest counts")
    args = ap.parse_args()
    usable = sorted(os.sched_getaffinity(0))
    if args.workers > len(usable):
        raise SystemExit(f"--workers {args.workers}: only {len(usable)} usable cores")
    one, cores = set(usable[:1]), set(usable[:args.workers])
    os.environ.setdefault("VISTAR_HOME", tempfile.mkdtemp())  # only the weights named here
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    table, utilisation, ray_rows = [], [], []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        tmp = Path(tmp)
        workloads = []
        if args.posters:
            workloads.append((f"TR, {args.posters} posters", args.posters, posters(tmp / "tr", args.posters), {}))
        if args.mixed:
            with contextlib.redirect_stdout(sys.stderr):  # the checkpoint builders' notices stay out of the tables
                root, weights = mixed(tmp / "mixed", args.mixed)
            workloads.append((f"mixed, {args.mixed} images", args.mixed, root, weights))
        n = args.workers
        configurations: list[tuple[str, set[int], list[str], dict]] = [
            ("one process, one core", one, ["--cpu-workers", "1"], {}), ("one process", cores, ["--cpu-workers", "1"], {}),
            (f"`--cpu-workers {n}`", cores, ["--cpu-workers", str(n)], {})]
        if not args.no_ray:
            configurations.append((f"`--executor ray` ({n} CPUs)", cores, ["--executor", "ray", "--cpu-workers", str(n)], {}))
        if args.attach and not args.no_ray:
            address, token = stack.enter_context(loopback_cluster(n, cores))
            configurations.append((f"`--ray-address` ({n} CPUs)", cores, ["--executor", "ray", "--cpu-workers", str(n),
                                                                         "--ray-address", address], token))
        for name, size, root, weights in workloads:
            half = first_half(root)
            results, halves = {}, {}
            for k, (label, allowed, options, env) in enumerate(configurations):
                for rep in range(args.repeat):  # the fastest of the repeats: other load only ever slows a run down
                    once = run(half, tmp / f"{size}-{k}-{rep}-half", weights, allowed, *options, env=env)
                    halves[label] = min(halves.get(label, once), once, key=lambda r: r["wall"])
                    once = run(root, tmp / f"{size}-{k}-{rep}", weights, allowed, *options, env=env)
                    results[label] = min(results.get(label, once), once, key=lambda r: r["wall"])
                print(f"{name}, {label}: {halves[label]['wall']:.1f} s for half, {results[label]['wall']:.1f} s",
                      file=sys.stderr)
            rows, used = report(name, size, results, halves)
            table += rows
            utilisation += used
            ray_rows += against_pool(name, size, results, halves, f"`--cpu-workers {n}`")
    command = " ".join(["python", "benchmarks/bench_executor.py", *sys.argv[1:]])
    print(f"`{command}` on {machine()}; 1/5/15-minute load average {before} before, "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} after.\n")
    print("| workload | executor | cores | workers | wall s, N/2 | wall s, N | load | images/s | vs 1 core | "
          "steady images/s | vs 1 core | start-up s | rows |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(table))
    print("\nimages/s: N images over the whole run's wall; steady images/s: (N - N/2) / (wall(N) - wall(N/2)), the "
          "rate once the run's fixed costs are paid; start-up s = wall(N) - N / steady; `load`: the 1-minute load "
          "average when the fastest N-image run started.\n")
    if ray_rows:
        print("| workload | Ray run | steady vs pool | whole run vs pool | paid before scoring, s |\n|---|---|---:|---:|---|")
        print("\n".join(ray_rows) + "\n")
    print("| workload | executor | utilisation per stage (% of workers × wall) |\n|---|---|---|")
    print("\n".join(utilisation))


if __name__ == "__main__":
    main()
