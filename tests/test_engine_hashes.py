"""The sha256 cache makes reruns cheap without ever trusting a changed file."""
import hashlib
import os
import time
from types import SimpleNamespace

from vistar.engine import hashes


def _write(path, data: bytes, mtime: int | None = 1_600_000_000):
    path.write_bytes(data)
    if mtime is not None:
        os.utime(path, ns=(mtime * 10**9, mtime * 10**9))
    return path


def _clock_after(monkeypatch, path):
    """The cache's clock set so that `path` (and anything changed before it) is out of the racy window: ctime,
    which the cache also checks, is the time of the write however the mtime was set."""
    now = os.stat(path).st_ctime_ns + 1 + int(hashes.RACY_S * 1e9)
    monkeypatch.setattr(hashes, "time", SimpleNamespace(time_ns=lambda: now))


def test_cache_hits_misses_and_racy_files(tmp_path, monkeypatch):
    old = _write(tmp_path / "old.png", b"abc")
    _clock_after(monkeypatch, old)
    time.sleep(0.05)  # past the kernel's timestamp tick
    fresh = _write(tmp_path / "fresh.png", b"xyz", mtime=None)  # just written: within the racy window
    missing = tmp_path / "missing.png"
    first = hashes.hash_files([old, fresh, missing, old], tmp_path)
    assert first[old] == hashlib.sha256(b"abc").hexdigest() and first[fresh] == hashlib.sha256(b"xyz").hexdigest()
    assert isinstance(first[missing], OSError)

    reads = []
    real = hashes.file_sha256
    monkeypatch.setattr(hashes, "file_sha256", lambda p: reads.append(p.name) or real(p))
    again = hashes.hash_files([old, fresh], tmp_path)
    assert again == {old: first[old], fresh: first[fresh]} and reads == ["fresh.png"]  # old from the cache

    reads.clear()
    _write(old, b"abd", mtime=1_600_000_001)  # same size, new content and time
    assert hashes.hash_files([old], tmp_path)[old] == hashlib.sha256(b"abd").hexdigest() and reads == ["old.png"]


def test_unreadable_cache_is_ignored(tmp_path, monkeypatch):
    f = _write(tmp_path / "a.png", b"abc")
    _clock_after(monkeypatch, f)
    (tmp_path / hashes.CACHE).write_bytes(b"not parquet")
    assert hashes.hash_files([f], tmp_path)[f] == hashlib.sha256(b"abc").hexdigest()
    assert hashes._load(tmp_path)[str(f)][1] == hashlib.sha256(b"abc").hexdigest()  # rewritten properly


def test_read_failure_is_an_error_value_not_a_crash(tmp_path, monkeypatch):
    f = _write(tmp_path / "a.png", b"abc")

    def denied(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(hashes, "file_sha256", denied)
    assert isinstance(hashes.hash_files([f], tmp_path)[f], PermissionError)
    assert str(f) not in hashes._load(tmp_path)  # failures are not cached


def test_a_call_over_some_files_keeps_the_cached_hashes_of_the_others(tmp_path, monkeypatch):
    """`--angles TR`, or one `vistar.Scorer` call, hashes a subset: the rest of the cache must survive it."""
    a, b = _write(tmp_path / "a.png", b"aaa"), _write(tmp_path / "b.png", b"bbb")
    _clock_after(monkeypatch, b)
    hashes.hash_files([a, b], tmp_path)
    hashes.hash_files([a], tmp_path)
    hashes.hash_files([a], tmp_path, verify=True)
    read = []
    monkeypatch.setattr(hashes, "file_sha256", lambda path: read.append(path) or "x")
    assert hashes.hash_files([a, b], tmp_path) == {a: hashlib.sha256(b"aaa").hexdigest(), b: hashlib.sha256(b"bbb").hexdigest()}
    assert read == []   # both still cached: neither file read again
    _write(b, b"BBB!")  # a file changed since is still hashed again
    _clock_after(monkeypatch, b)
    assert hashes.hash_files([a, b], tmp_path)[b] == "x" and read == [b]
