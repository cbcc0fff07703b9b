"""The machine's process table read from /proc: what the lifecycle tests check no run leaves behind."""
from pathlib import Path


def children() -> dict[int, int]:
    """pid -> parent pid of every process on the machine."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdecimal():
            try:
                out[int(entry.name)] = int((entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return out


def descendants(pid: int) -> set[int]:
    parents, found, frontier = children(), set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"
