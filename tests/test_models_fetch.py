"""Model layer: catalogue, lookup order, fetch (file:// URL and a stand-in HF downloader), sha256 verification, CLI."""
from __future__ import annotations

import hashlib
import sys

import pytest
from typer.testing import CliRunner

from vistar.cli import app
from vistar.models import MissingWeightError, catalog as real_catalog, resolve_weight
from vistar.models.catalog import ModelSpec
from vistar.models.fetch import FetchError, download_url, fetch, verify
from vistar.models.provenance import sha256_of

catalog_mod = sys.modules["vistar.models.catalog"]  # the package re-exports a function of the same name

PAYLOAD = b"tiny weight bytes\n"
PAYLOAD_SHA = hashlib.sha256(PAYLOAD).hexdigest()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    return tmp_path / "home"


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A catalogue with a URL model served from a file:// URL, and an HF-style model."""
    src = tmp_path / "served" / "w.bin"
    src.parent.mkdir()
    src.write_bytes(PAYLOAD)
    models = dict(real_catalog())
    models["toy"] = ModelSpec("toy", "torch", "toy net", src.as_uri(), "MIT", {"w.bin": PAYLOAD_SHA})
    models["toy-bad"] = ModelSpec("toy-bad", "torch", "toy net", src.as_uri(), "MIT", {"w.bin": "0" * 64})
    pair = tmp_path / "served" / "pair"
    pair.mkdir()
    (pair / "a.bin").write_bytes(b"A")
    (pair / "b.bin").write_bytes(b"B")
    models["toy-pair"] = ModelSpec("toy-pair", "torch", "toy net", pair.as_uri() + "/", "MIT",
                                   {"a.bin": hashlib.sha256(b"A").hexdigest(), "b.bin": hashlib.sha256(b"B").hexdigest()})
    models["toy-hf"] = ModelSpec("toy-hf", "transformers", "toy", "someone/toy", "MIT", {"config.json": None})
    monkeypatch.setattr(catalog_mod, "catalog", lambda: models)
    return models


def test_catalogue_names_the_two_issue_models_with_licences():
    models = real_catalog()
    assert models["yolov8l-seg"].library == "ultralytics" and "AGPL" in models["yolov8l-seg"].licence
    assert models["dpt-hybrid-midas"].source == "Intel/dpt-hybrid-midas" and models["dpt-hybrid-midas"].is_hf


def test_missing_weight_message_names_weight_and_command(home):
    with pytest.raises(MissingWeightError) as info:
        resolve_weight("dpt-hybrid-midas")
    assert "dpt-hybrid-midas" in str(info.value) and "vistar models fetch dpt-hybrid-midas" in str(info.value)
    assert "--model-path dpt-hybrid-midas=PATH" in str(info.value)


def test_lookup_order_override_then_home_then_hf_cache(home, tmp_path, toy):
    snap = tmp_path / "hf" / "models--someone--toy" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    assert resolve_weight("toy-hf") == snap
    local = home / "models" / "toy-hf"
    local.mkdir(parents=True)
    (local / "config.json").write_text("{}")
    assert resolve_weight("toy-hf") == local
    override = tmp_path / "mine"
    override.mkdir()
    assert resolve_weight("toy-hf", {"toy-hf": str(override)}) == override
    with pytest.raises(MissingWeightError, match="does not exist"):
        resolve_weight("toy-hf", {"toy-hf": str(tmp_path / "nowhere")})


def test_hf_cache_snapshot_is_the_one_refs_main_names_else_the_newest(home, tmp_path, toy):
    import os

    repo = tmp_path / "hf" / "models--someone--toy"
    for name, mtime in (("fff0", 1_000), ("aaa1", 3_000), ("ccc2", 2_000)):  # alphabetical order is not age order
        snap = repo / "snapshots" / name
        snap.mkdir(parents=True)
        (snap / "config.json").write_text(name)
        os.utime(snap, (mtime, mtime))
    assert resolve_weight("toy-hf") == repo / "snapshots" / "aaa1"   # newest, not the largest name
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("ccc2\n")
    assert resolve_weight("toy-hf") == repo / "snapshots" / "ccc2"
    (repo / "refs" / "main").write_text("0123")   # names a snapshot that is not there: newest again
    assert resolve_weight("toy-hf") == repo / "snapshots" / "aaa1"


def test_fetch_file_url_into_home_and_verify(home, toy):
    path = fetch("toy")
    assert path == home / "models" / "toy" and (path / "w.bin").read_bytes() == PAYLOAD
    assert resolve_weight("toy") == path
    where, checks = verify("toy")
    assert where == path and [(c.file, c.status, c.actual) for c in checks] == [("w.bin", "ok", PAYLOAD_SHA)]


def test_fetch_rejects_hash_mismatch_and_leaves_nothing(home, toy):
    with pytest.raises(FetchError, match="mismatch"):
        fetch("toy-bad")
    assert not (home / "models" / "toy-bad" / "w.bin").exists()
    with pytest.raises(MissingWeightError):
        resolve_weight("toy-bad")


def test_fetch_hf_source_uses_hf_downloader_and_reuses_local_copy(home, toy):
    calls = []

    def fake_hf(repo_id, dest, files):
        calls.append((repo_id, files))
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "config.json").write_text('{"x": 1}')

    path = fetch("toy-hf", hf_downloader=fake_hf)
    assert calls == [("someone/toy", ["config.json"])] and (path / "config.json").exists()
    fetch("toy-hf", hf_downloader=fake_hf)       # already there: no second download
    assert len(calls) == 1
    _, checks = verify("toy-hf")  # not pinned in the catalogue: checked against the hash recorded at fetch
    assert checks[0].status == "recorded" and checks[0].actual == hashlib.sha256(b'{"x": 1}').hexdigest()
    (path / "config.json").write_text('{"x": 2}')  # changed after fetch
    _, checks = verify("toy-hf")
    assert checks[0].status == "mismatch" and checks[0].expected == hashlib.sha256(b'{"x": 1}').hexdigest()


def test_interrupted_download_is_named_missing_and_finished_by_plain_fetch(home, toy):
    def cut_before_b(url, dest):
        if url.endswith("b.bin"):
            raise OSError("network cut")
        download_url(url, dest)

    with pytest.raises(OSError, match="network cut"):
        fetch("toy-pair", url_downloader=cut_before_b)
    with pytest.raises(MissingWeightError, match=r"'b.bin' is missing .*`vistar models fetch toy-pair`"):
        resolve_weight("toy-pair")
    fetched = []

    def counting(url, dest):
        fetched.append(url.rsplit("/", 1)[1])
        download_url(url, dest)

    path = fetch("toy-pair", url_downloader=counting)
    assert fetched == ["b.bin"] and (path / "b.bin").read_bytes() == b"B"
    assert [c.status for c in verify("toy-pair")[1]] == ["ok", "ok"]


def test_plain_fetch_replaces_a_mismatched_file_only(home, toy):
    path = fetch("toy-pair")
    (path / "a.bin").write_bytes(b"corrupt")
    fetched = []
    fetch("toy-pair", url_downloader=lambda url, dest: (fetched.append(url.rsplit("/", 1)[1]), download_url(url, dest)))
    assert fetched == ["a.bin"] and (path / "a.bin").read_bytes() == b"A"


def test_interrupted_hf_snapshot_keeps_its_cache_folder_and_is_finished(home, toy):
    """huggingface_hub leaves `.cache/` in the target folder, so the folder is never empty after a cut."""
    calls = []

    def hf(repo_id, dest, files):
        calls.append(files)
        (dest / ".cache" / "huggingface").mkdir(parents=True, exist_ok=True)
        if len(calls) == 1:
            raise OSError("network cut")
        (dest / "config.json").write_text("{}")

    with pytest.raises(OSError):
        fetch("toy-hf", hf_downloader=hf)
    with pytest.raises(MissingWeightError, match="'config.json' is missing"):
        resolve_weight("toy-hf")
    assert fetch("toy-hf", hf_downloader=hf) == home / "models" / "toy-hf"
    assert calls == [["config.json"], ["config.json"]]


def test_folder_hash_ignores_hidden_download_metadata(tmp_path):
    """Same weights, different download times in huggingface_hub's `.cache/`: one hash, the visible files'."""
    folders = []
    for stamp in ("1700000000.1", "1800000000.2"):
        folder = tmp_path / stamp
        (folder / "sub").mkdir(parents=True)
        (folder / "config.json").write_bytes(b"{}")
        (folder / "sub" / "w.bin").write_bytes(PAYLOAD)
        (folder / "sub" / ".lock").write_text(stamp)
        (folder / ".cache" / "huggingface" / "download").mkdir(parents=True)
        (folder / ".cache" / "huggingface" / "download" / "w.bin.metadata").write_text(stamp)
        folders.append(folder)
    expected = hashlib.sha256(b"config.json" + b"{}" + b"sub/w.bin" + PAYLOAD).hexdigest()
    assert sha256_of(folders[0]) == sha256_of(folders[1]) == expected
    (folders[1] / "sub" / "w.bin").write_bytes(b"other")
    assert sha256_of(folders[1]) != expected


def test_cli_list_fetch_verify(home, toy):
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "list"])
    assert listed.exit_code == 0 and "yolov8l-seg" in listed.output and "dpt-hybrid-midas" in listed.output
    fetched = runner.invoke(app, ["models", "fetch", "toy"])
    assert fetched.exit_code == 0, fetched.output
    ok = runner.invoke(app, ["models", "verify", "toy"])
    assert ok.exit_code == 0 and "w.bin: ok" in ok.output
    (home / "models" / "toy" / "w.bin").write_bytes(b"tampered")
    bad = runner.invoke(app, ["models", "verify", "toy"])
    assert bad.exit_code == 1 and "mismatch" in bad.output
    assert runner.invoke(app, ["models", "fetch", "no-such-model"]).exit_code == 2


@pytest.mark.slow
def test_core_imports_stay_light():
    """torch, transformers and ultralytics load only inside model loaders, never on import."""
    import subprocess
    import sys as _sys

    code = ("import sys, vistar.cli, vistar.metrics.psc, vistar.metrics.gc, vistar.features.depth, "
            "vistar.features.instances, vistar.features.padim, vistar.kernels.chaos\n"
            "print(sorted({'torch', 'transformers', 'ultralytics', 'triton', 'numba'} & set(sys.modules)))")
    done = subprocess.run([_sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
