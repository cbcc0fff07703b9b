"""Crash safety: a real `vistar score` killed with SIGKILL, and a crash injected at every step of a generation swap."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest
from PIL import Image

from tests.support import engine_plugins
from vistar.engine import store as store_mod
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import ResultStore, read_scores

REPO = Path(__file__).resolve().parents[1]
N_IMAGES = 30
COLUMNS = ["image", "model", "prompt_id", "sample", "metric", "score", "status", "error", "details", "key"]


def _scene(folder: Path) -> Path:
    lines = []
    for i in range(N_IMAGES):
        model_dir = folder / "imgs" / f"m{i % 3}"
        model_dir.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (12, 12), (i * 8, 255 - i * 8, 77)).save(model_dir / f"p{i}.png")
        lines.append(f'p{i}: [GD|TR] sign "{i}"' + (' {odd="skip"}' if i == 5 else ""))
    (folder / "p.vistar").write_text("\n".join(lines) + "\n")
    return folder / "p.vistar"


def _cli(folder: Path, run: Path, sleep: float) -> subprocess.Popen:
    env = {**os.environ, "VISTAR_TEST_SLEEP": str(sleep), "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "tests.support.engine_plugins", "score", str(folder / "imgs"), "--prompts", str(folder / "p.vistar"),
           "--out", str(run), "--batch-size", "2"]
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _shards(run: Path) -> list[Path]:
    link = run / "scores.parquet"
    return sorted(link.glob("part-*.parquet")) if link.exists() else []


def _assert_clean_dataset(run: Path) -> pd.DataFrame:
    """What any reader sees: only complete Parquet files, no duplicated key or (image, metric)."""
    for shard in _shards(run):
        pq.ParquetFile(shard).metadata  # complete file: footer readable
    raw = pd.read_parquet(run / "scores.parquet") if _shards(run) else pd.DataFrame(columns=COLUMNS)
    duck = duckdb.sql(f"select count(*) from read_parquet('{run}/scores.parquet/*.parquet')").fetchall()[0][0] if _shards(run) else 0
    assert len(raw) == duck
    assert not raw.key.duplicated().any() and not raw.duplicated(["image", "prompt_id", "metric"]).any()
    return raw


def _reference(tmp_path: Path, monkeypatch) -> pd.DataFrame:
    engine_plugins.install(monkeypatch)
    run_score(ScoreConfig(tmp_path / "imgs", tmp_path / "p.vistar", tmp_path / "clean"))
    return read_scores(tmp_path / "clean")[COLUMNS].sort_values(["image", "metric"]).reset_index(drop=True)


@pytest.mark.slow
@pytest.mark.parametrize("kill_after_shards", [0, 4])
def test_sigkill_mid_run_loses_nothing_but_the_batch_in_flight(tmp_path, monkeypatch, kill_after_shards):
    _scene(tmp_path)
    clean = _reference(tmp_path, monkeypatch)
    assert len(clean) == 2 * N_IMAGES
    run = tmp_path / "run"
    proc = _cli(tmp_path, run, sleep=0.05)
    deadline = time.monotonic() + 60
    while len(_shards(run)) < max(1, kill_after_shards) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    if kill_after_shards == 0:  # as early as the store exists: before or during the first batch
        while not (run / "scores.parquet").exists() and proc.poll() is None:
            time.sleep(0.005)
    assert proc.poll() is None, proc.stderr.read().decode()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _assert_clean_dataset(run)
    assert len(partial) < 2 * N_IMAGES
    merged = partial[COLUMNS].merge(clean, on=COLUMNS, how="left", indicator=True)
    assert (merged["_merge"] == "both").all()  # every row that survived is exactly the clean run's row
    assert '"status": "running"' in (run / "run.json").read_text()

    rerun = _cli(tmp_path, run, sleep=0)
    assert rerun.wait(timeout=120) == 0, rerun.stderr.read().decode()
    final = _assert_clean_dataset(run)
    assert len(final) == 2 * N_IMAGES
    pd.testing.assert_frame_equal(final[COLUMNS].sort_values(["image", "metric"]).reset_index(drop=True), clean)
    assert not list((run / ".scores").glob(".tmp-gen-*")) and len(list((run / ".scores").glob("gen-*"))) == 1


def _rows(n: int, start: int = 0, status: str = "ok") -> list[dict]:
    return [{"image": f"m/i{i}.png", "image_sha256": "s", "model": "m", "prompt_id": f"i{i}", "sample": 0, "role": "GD",
             "angle": "TR", "metric": "TR", "score": i / 100, "status": status, "error": None, "details": {"i": i},
             "set": None, "metric_version": "1", "key": f"k{i}"} for i in range(start, start + n)]


@pytest.mark.parametrize("crash_at", ["build", "rename", "swap", "cleanup"])
@pytest.mark.parametrize("operation", ["compact", "forget"])
def test_crash_at_any_step_of_a_generation_swap(tmp_path, monkeypatch, crash_at, operation):
    store = ResultStore(tmp_path)
    for start in range(0, 9, 3):
        store.write(_rows(3, start))
    (store.dir / ".part-000099-dead.parquet.tmp").write_bytes(b"PAR1 half a shard")  # an interrupted append
    before = _assert_clean_dataset(tmp_path)
    assert len(before) == 9

    class Crash(Exception):
        pass

    def boom(*a, **k):
        raise Crash

    real_replace = os.replace

    def replace_but_not_a_generation(src, dst):  # crash exactly when the finished generation would get its name
        if Path(src).name.startswith(".tmp-gen-"):
            raise Crash
        return real_replace(src, dst)

    target = {"build": (store, "_write_table", boom), "rename": (store_mod.os, "replace", replace_but_not_a_generation),
              "swap": (ResultStore, "_point_to", boom), "cleanup": (store_mod.shutil, "rmtree", boom)}[crash_at]
    with monkeypatch.context() as patch:
        patch.setattr(*target)
        with pytest.raises(Crash):
            store.compact() if operation == "compact" else store.forget({"k1", "k4"})
    visible = _assert_clean_dataset(tmp_path)  # before or after the swap, never in between
    swapped = crash_at == "cleanup"
    expected = 9 if operation == "compact" or not swapped else 7
    assert len(visible) == expected and set(visible.key) <= set(before.key)

    recovered = ResultStore(tmp_path)  # the next writer cleans up and carries on
    assert len(list((tmp_path / ".scores").glob("gen-*"))) == 1 and not list((tmp_path / ".scores").glob(".tmp-gen-*"))
    assert not list(recovered.dir.glob(".*.tmp"))
    recovered.write(_rows(2, 100))
    recovered.compact()
    final = _assert_clean_dataset(tmp_path)
    assert len(final) == expected + 2 and len(_shards(tmp_path)) == 1
    assert len(read_scores(tmp_path)) == expected + 2


def test_plain_folder_is_adopted_and_readers_never_write(tmp_path):
    plain = tmp_path / "scores.parquet"
    plain.mkdir()
    import pyarrow as pa
    pq.write_table(pa.Table.from_pylist([{**r, "details": "{}", "shard": 0} for r in _rows(2)], schema=store_mod.SCHEMA),
                   plain / "part-000000-aaaaaaaa.parquet")
    assert len(read_scores(tmp_path)) == 2 and not plain.is_symlink()  # a reader leaves the folder as it is
    store = ResultStore(tmp_path)
    assert plain.is_symlink() and len(read_scores(tmp_path)) == 2
    store.write(_rows(1, 50))
    assert sorted(read_scores(tmp_path).key) == ["k0", "k1", "k50"]
    assert len(read_scores(tmp_path / "nothing-here")) == 0 and not (tmp_path / "nothing-here").exists()


def test_compaction_merges_small_shards_and_keeps_big_ones(tmp_path):
    store = ResultStore(tmp_path)
    for i in range(5):
        store.write(_rows(1, i))
    store.compact(rows_per_shard=4)
    sizes = sorted(pq.ParquetFile(p).metadata.num_rows for p in _shards(tmp_path))
    assert sizes == [1, 4]
    big = next(p for p in _shards(tmp_path) if pq.ParquetFile(p).metadata.num_rows == 4)
    inode = big.stat().st_ino
    store.write(_rows(1, 10))
    store.compact(rows_per_shard=4)
    shards = _shards(tmp_path)
    assert sorted(pq.ParquetFile(p).metadata.num_rows for p in shards) == [2, 4]
    assert any(p.name == big.name and p.stat().st_ino == inode for p in shards)  # not rewritten
    assert sorted(_assert_clean_dataset(tmp_path).key) == sorted(f"k{i}" for i in (0, 1, 2, 3, 4, 10))
