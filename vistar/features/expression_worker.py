"""The expression classifier in its own (spawned) process, so a crash there — a segfault in a native
library, an out-of-memory kill — fails the image being classified, not the run (VISTAR isolates it too).

One request per image; a dead or silent worker is reaped, that request raises `WorkerCrashed`, and the next
request starts a fresh worker. A classifier that cannot load (a broken weight file) is reported back once as
`WorkerLoadFailed` with its real reason, and every later request raises the same without starting another worker.
"""
from __future__ import annotations

import importlib
import multiprocessing as mp
import weakref

import numpy as np


class WorkerCrashed(RuntimeError):
    pass


class WorkerLoadFailed(RuntimeError):
    """The classifier could not be loaded; retrying per image would fail the same way."""


def load_factory(path: str):
    """'package.module:attr.attr' -> the callable (classifier factory taking the weight path)."""
    module, _, attr = path.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _serve(conn, factory: str, weight_path: str) -> None:
    try:
        classifier = load_factory(factory)(weight_path)
    except Exception as exc:  # an answer, not a crash: the parent learns why and stops asking
        conn.send(("load_error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", None))
    while True:
        request = conn.recv()
        if request is None:
            return
        try:
            conn.send(("ok", np.asarray(classifier(request), np.float32)))
        except Exception as exc:  # a Python error is reported back; only a real crash kills the worker
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


def _stop(process, conn) -> None:
    try:
        conn.send(None)
        conn.close()
    except (OSError, ValueError):
        pass
    process.join(timeout=2)
    if process.is_alive():
        process.kill()
        process.join()


class ExpressionWorker:
    def __init__(self, factory: str, weight_path: str, timeout_s: float = 60.0):
        self.factory, self.weight_path, self.timeout_s = factory, str(weight_path), timeout_s
        self._process = self._conn = None
        self.restarts = 0
        self._load_error: str | None = None

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child, self.factory, self.weight_path), daemon=True,
                              name="vistar-expression")
        process.start()
        child.close()
        self._process, self._conn = process, parent
        self._finalizer = weakref.finalize(self, _stop, process, parent)

    def _reap(self) -> str:
        process = self._process
        self._finalizer.detach()
        process.join(timeout=1)
        if process.is_alive():
            process.kill()
            process.join()
        self._process = self._conn = None
        self.restarts += 1
        return f"exit code {process.exitcode}"

    def _receive(self) -> tuple[str, object]:
        try:
            if not self._conn.poll(self.timeout_s):
                raise TimeoutError
            return self._conn.recv()
        except TimeoutError:
            self._process.kill()
            raise WorkerCrashed(f"expression worker silent for {self.timeout_s:g} s ({self._reap()})") from None
        except (EOFError, OSError) as exc:
            raise WorkerCrashed(f"expression worker died ({self._reap()}): {type(exc).__name__}") from None

    def _ensure_started(self) -> None:
        if self._load_error is not None:
            raise WorkerLoadFailed(self._load_error)
        if self._process is not None:
            return
        self._start()
        status, payload = self._receive()
        if status == "load_error":
            self._reap()
            self._load_error = f"expression classifier could not load {self.weight_path}: {payload}"
            raise WorkerLoadFailed(self._load_error)

    def classify(self, gray_faces: np.ndarray) -> np.ndarray:
        self._ensure_started()
        try:
            self._conn.send(gray_faces)
        except OSError as exc:
            raise WorkerCrashed(f"expression worker died ({self._reap()}): {type(exc).__name__}") from None
        status, payload = self._receive()
        if status != "ok":
            raise RuntimeError(f"expression classifier failed: {payload}")
        return payload

    def close(self) -> None:
        if self._process is not None:
            self._finalizer()
            self._process = self._conn = None
