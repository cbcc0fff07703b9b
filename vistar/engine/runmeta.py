"""Run metadata for `run.json`: what was run, with which software, on which hardware."""
from __future__ import annotations

import contextlib
import importlib.metadata as md
import json
import os
import platform
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any, Iterator, NoReturn

from ..atomic import write_text_atomic

# run.json statuses of a run that did all it could: `nothing_scored` is a finished shard that held no image
FINISHED = ("complete", "nothing_scored")
_PACKAGES = ("vistar", "numpy", "pillow", "pyarrow", "rapidocr", "onnxruntime", "rapidfuzz", "torch",
             "transformers", "ultralytics", "mediapipe", "opencv-python-headless", "numba", "triton")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            continue
    return out


def hardware() -> dict[str, Any]:
    info: dict[str, Any] = {"platform": platform.platform(), "machine": platform.machine(), "processor": platform.processor(),
            "cpu_count": os.cpu_count()}
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        info["memory_gib"] = round(pages * page_size / 2**30, 1)
    except (ValueError, OSError):
        pass
    if "torch" in sys.modules:  # only report a GPU if this run imported torch anyway
        torch = sys.modules["torch"]
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    return info


def write_json_atomic(path: str | Path, payload: dict[str, Any]) -> None:
    write_text_atomic(path, json.dumps(payload, indent=2, sort_keys=True, default=str))


class Interrupted(KeyboardInterrupt):
    """SIGTERM unwinding a run the way Ctrl-C does, so the run can record that it was stopped. `signum` says which."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within: SIGTERM raises `Interrupted` (the default would end the process with no word in run.json).
    Only the main thread can take signals; elsewhere this changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> NoReturn:
        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def mark_interrupted(path: Path, exc: KeyboardInterrupt) -> None:
    """`run.json` of a run stopped by SIGINT (Ctrl-C) or SIGTERM: `status: interrupted`, with the signal and time.
    Only a run that got as far as saying `running`: an earlier run's finished record is left as it was."""
    name = signal.Signals(exc.signum).name if isinstance(exc, Interrupted) else "SIGINT"
    _end_running(path, "interrupted", {"signal": name})


def mark_failed(path: Path, exc: BaseException) -> str:
    """`run.json` of a run an exception ended (a full disk, a folder made read-only): `status: failed`, with the
    error and time, so no scheduler reads it as running or done. Returns what run.json says now, in words."""
    return _end_running(path, "failed", {"error": str(exc) or type(exc).__name__})


def _end_running(path: Path, status: str, detail: dict[str, Any]) -> str:
    """Rewrite a `running` run.json as `status`. On a full disk the atomic write (a new file) can fail where
    rewriting the file in place, into the blocks it frees, succeeds: tried next."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{path} could not be read"
    if not isinstance(meta, dict) or meta.get("status") != "running":
        return f"{path} keeps the status of the run before ({meta.get('status') if isinstance(meta, dict) else None!r})"
    text = json.dumps({**meta, "status": status, status: {**detail, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}},
                      indent=2, sort_keys=True, default=str)
    try:
        write_text_atomic(path, text)
    except OSError:
        try:
            with open(path, "r+", encoding="utf-8", errors="backslashreplace") as fh:
                fh.truncate(0)
                fh.write(text)
        except OSError as exc:
            return f"{path} could not be updated ({exc})"
    return f"{path} says {status}"


def run_status_notes(run_dir: Path) -> list[str]:
    """A notice when `RUN_DIR/run.json` does not say the run finished: missing or unreadable (a half-written or
    copied folder), `running` (interrupted, or still being scored), `partial` (`vistar merge --partial`, with its
    missing shards) or any other status; also when the run is one shard of a sharded run."""
    path = run_dir / "run.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [(f"This run has no run.json ({path}): the folder may be half-written or copied without it, so whether "
                 "the run finished is unknown; its scores may cover only part of the work.")]
    except (OSError, ValueError) as exc:
        return [(f"run.json cannot be read ({path}: {exc}): whether the run finished is unknown; its scores may cover "
                 "only part of the work.")]
    if not isinstance(meta, dict):
        return [(f"run.json is not a JSON object ({path}): whether the run finished is unknown; its scores may cover "
                 "only part of the work.")]
    notes = []
    status = meta.get("status")
    if status == "nothing_scored":
        notes.append(f"The run scored nothing (run.json status: 'nothing_scored'): {meta.get('nothing_scored')}.")
    elif status != "complete":
        what = {"running": ("it was interrupted, or is still being scored; rerun the same `vistar score` command to "
                            "finish it"),
                "interrupted": (f"it was stopped by {(meta.get('interrupted') or {}).get('signal', 'a signal')}; rerun "
                                "the same `vistar score` command to finish it"),
                "partial": "it was merged with `vistar merge --partial` from an incomplete set of runs",
                "failed": (f"it failed: {(meta.get('failed') or {}).get('error', 'an error')}; once that is mended, "
                           "rerun the same `vistar score` command to finish it"),
                }.get(str(status), "the run did not finish")
        note = f"The run is not complete (run.json status: {status!r}): {what}; its scores cover only part of the work."
        missing = _list(meta.get("missing_shards"))
        merged_from = [m for m in _list(meta.get("merged_from")) if isinstance(m, dict)]
        if missing:
            count = next((m["shard"].get("count") for m in merged_from if isinstance(m.get("shard"), dict)), None)
            shards = ", ".join(f"{k}/{count}" if count else str(k) for k in missing)
            note += f" Missing shards: {shards}."
        unfinished = [f"{m.get('run')} ({m.get('status')})" for m in merged_from if m.get("status") not in FINISHED]
        if unfinished:
            note += f" Merged from unfinished runs: {', '.join(unfinished)}."
        notes.append(note)
    shard = meta.get("shard")
    if isinstance(shard, dict) and isinstance(shard.get("count"), int) and shard["count"] > 1:
        notes.append(f"This run is shard {shard.get('index')}/{shard.get('count')}: it holds only that shard's images; "
                     "`vistar merge` the shards for the whole work.")
    return notes


def run_provenance(run_dir: Path) -> list[str]:
    """What ran, in words, from `RUN_DIR/run.json`: the device asked for and used, where each stage ran, and the
    runtime (execution provider, OpenVINO precision) of every model that recorded one, with the note saying why
    it is not what was asked for. For reports; a run.json from before these fields gives what it has, an
    unreadable one nothing (`run_status_notes` says so)."""
    try:
        meta = json.loads((Path(run_dir) / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(meta, dict):
        return []
    lines = []
    device, asked = meta.get("device"), meta.get("device_requested")
    if device:
        stages: dict[str, str] = meta["stage_devices"] if isinstance(meta.get("stage_devices"), dict) else {}
        where = "; stages: " + ", ".join(f"{name} on {dev}" for name, dev in sorted(stages.items())) if stages else ""
        lines.append(f"Device: {device}" + (f" (--device {asked})" if asked and asked != device else "") + where + ".")
    precisions: dict[str, str] = meta["stage_precisions"] if isinstance(meta.get("stage_precisions"), dict) else {}
    if any(p != "fp32" for p in precisions.values()):   # fp32, the validated baseline, goes without saying
        lines.append("Precision: " + ", ".join(f"{name} {p}" for name, p in sorted(precisions.items())) + ".")
    models: dict[str, Any] = meta["models"] if isinstance(meta.get("models"), dict) else {}
    for name, entry in sorted(models.items()):
        if isinstance(entry, dict) and entry.get("provider"):
            note = f" ({entry['note']})" if entry.get("note") else ""
            lines.append(f"{name} ran on {entry['provider']}{note}.")
    return lines


def _list(value: object) -> list[Any]:
    """A run.json field that should be a list (a hand-edited or foreign file may hold anything)."""
    return value if isinstance(value, list) else [] if value is None else [value]
