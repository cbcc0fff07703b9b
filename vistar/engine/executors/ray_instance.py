"""What a run does around Ray itself: Ray's log lines go to a file of the run folder, and a Ray instance the run
started on this machine ends with the run, even when the run is killed with `kill -9`.

Ray's driver-side lines (the token-authentication notice, `ray.init`'s own messages) are Python logging on the
`ray` logger, which Ray gives a stderr handler when it is imported: for the session that handler is swapped for
RUN/ray.log. The daemons' own logs stay in Ray's session folder (`/tmp/ray/session_latest/logs`).

A killed driver takes its instance's GCS and raylet with it (Ray starts them with the kernel's parent-death
signal), but the raylet's two agents (`ray::DashboardAgent`, `ray::RuntimeEnvAgent`) notice the raylet's death
only by polling, then try to report it to the dead GCS for up to 60 s. `InstanceWatcher` is a small process that
waits on a pipe from the driver: when the pipe closes (the driver ended, however) it SIGKILLs every process of
that instance: the daemons `ray.init` started, and every process with a file of the instance's session folder open
(each writes its log there; the agents and the workers rename themselves, and the renaming overwrites their
environment as /proc shows it, so neither names nor environment tell them apart).
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

RAY_LOG = "ray.log"

# Run as `python -c WATCH SESSION_DIR DRIVER PID...`: reads its stdin to the end, then kills the PIDs and every
# process but the driver with a file of the session open (every process Ray starts writes a log file there).
WATCH = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
sys.stdin.buffer.read()
logs = sys.argv[1].rstrip("/") + "/"
driver = int(sys.argv[2])
doomed = {int(p) for p in sys.argv[3:]}
def holds_session_file(pid):
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(logs):
                return True
        except OSError:
            pass
    return False
doomed |= {int(entry) for entry in os.listdir("/proc") if entry.isdigit() and holds_session_file(entry)}
for pid in doomed - {os.getpid(), driver}:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""


class RunLog(logging.FileHandler):
    """A file handler that opens (and creates the run folder of) its file only when a line comes: a cluster run
    checked before its folder exists leaves nothing on disk unless Ray had something to say."""

    def __init__(self, path: Path):
        super().__init__(path, delay=True, encoding="utf-8")

    def _open(self) -> Any:
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()


class RayLogToFile:
    """For its `with` block, the `ray` logger writes to PATH instead of the terminal (None: left as it is)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.saved: list[logging.Handler] = []
        self.handler: logging.Handler | None = None

    def __enter__(self) -> RayLogToFile:
        if self.path is not None:
            logger = logging.getLogger("ray")
            self.saved, self.handler = list(logger.handlers), RunLog(self.path)
            logger.handlers = [self.handler]
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handler is not None:
            logging.getLogger("ray").handlers = self.saved
            self.handler.close()


def children(parent: int) -> dict[int, str]:
    """pid -> command name of PARENT's child processes (from /proc; empty where there is none)."""
    found: dict[int, str] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                comm, rest = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)
            except (OSError, ValueError):
                continue
            if int(rest.split()[1]) == parent:
                found[int(entry)] = comm.split(b"(", 1)[1].decode(errors="replace")
    return found


class InstanceWatcher:
    """Started right after `ray.init` started an instance here, with DAEMONS (pid -> name: the children `ray.init`
    gave this process): it kills that instance's processes when this process ends (closing its pipe: `close()`
    after `ray.shutdown`, or the kernel when the driver is killed)."""

    def __init__(self, daemons: dict[int, str]) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        raylet = next((pid for pid, name in daemons.items() if name == "raylet"), None)
        session = _option(raylet, "--session_dir=") if raylet is not None else None
        if session is None:   # not Linux, or not a Ray this process started
            return
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", WATCH, session, str(os.getpid()), *map(str, daemons)],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True, close_fds=True)

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


def _option(pid: int, prefix: str) -> str | None:
    """The value of process PID's command-line option PREFIX (`--name=`), if it has one."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return next((arg.decode()[len(prefix):] for arg in args if arg.startswith(prefix.encode())), None)
