"""What reaches the disk before what: a power cut must never leave a renamed file whose bytes, or a switched link
whose target's name, were still only in the page cache. Checked by recording every fsync and rename, in order."""
import os
from pathlib import Path

import pytest

from vistar.atomic import write_text_atomic
from vistar.engine.store import ResultStore


@pytest.fixture
def events(monkeypatch):
    """('fsync', path) and ('replace', src, dst) in the order they happen."""
    seen: list[tuple] = []
    fsync, replace = os.fsync, os.replace

    def recording_fsync(fd):
        seen.append(("fsync", Path(os.readlink(f"/proc/self/fd/{fd}"))))
        return fsync(fd)

    def recording_replace(src, dst):
        seen.append(("replace", Path(src).absolute(), Path(dst).absolute()))
        return replace(src, dst)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "replace", recording_replace)
    return seen


def _index(events, event) -> int:
    assert event in events, f"{event} not among {events}"
    return events.index(event)


def test_write_text_atomic_syncs_the_bytes_before_the_rename_and_the_folder_after(tmp_path, events):
    target = tmp_path / "run.json"
    write_text_atomic(target, "{}")
    tmp = tmp_path / ".run.json.tmp"
    renamed = _index(events, ("replace", tmp, target))
    assert _index(events, ("fsync", tmp)) < renamed < _index(events, ("fsync", tmp_path))
    assert target.read_text() == "{}"


def test_a_new_generation_is_synced_in_its_parent_before_the_link_points_to_it(tmp_path, events):
    store = ResultStore(tmp_path)
    store.write([{"image": "a.png", "model": "m", "prompt_id": "p", "sample": 0, "metric": "TR", "status": "ok",
                  "score": 0.5, "key": "k1"}])
    events.clear()
    assert store.forget(["k1"]) == 1
    gens = tmp_path / ".scores"
    (moved,) = [e for e in events if e[0] == "replace" and e[2].parent == gens]   # .tmp-gen-N -> gen-N
    (switched,) = [e for e in events if e[0] == "replace" and e[2] == tmp_path / "scores.parquet"]
    assert events.index(moved) < _index(events, ("fsync", gens)) < events.index(switched)
