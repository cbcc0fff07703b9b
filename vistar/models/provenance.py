"""What weights a run actually loaded, with their sha256, for `run.json`."""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_LOADED: dict[str, dict] = {}


def sha256_of(path: str | Path) -> str:
    """sha256 of a file, or of a folder's files in sorted order (HF checkpoints are folders). Hidden files and
    folders (a name starting with '.') are left out: huggingface_hub keeps `.cache/` in a downloaded folder,
    whose metadata holds the download time, so identical weights would hash differently."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p.relative_to(path))) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode())
        with open(file, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def record_loaded(name: str, path: str | Path, sha256: str | None = None, **extra) -> None:
    _LOADED[name] = {"path": str(path), "sha256": sha256 or sha256_of(path), **extra}


def record_random(name: str, seed: int, builder: str, model_scale: str = "full") -> None:
    """A random-initialised stand-in (benchmarks only): no file, so no sha256; a tiny one says so."""
    _LOADED[name] = {"path": None, "sha256": None, "random_init": True, "seed": seed, "builder": builder,
                     **({"scale": model_scale} if model_scale != "full" else {})}


def clear_loaded() -> None:
    """Start a run's record afresh: each run loads its own models, and an earlier run or bench in the same
    process (a notebook, a test) must not leak its entries into this run's `run.json`."""
    _LOADED.clear()


def loaded_models() -> dict[str, dict]:
    return dict(_LOADED)


@contextmanager
def own_loads() -> Iterator[None]:
    """Inside the block, `loaded_models()` names only what the block loaded: a `vistar.Scorer` records and checks
    its own weights, not those another Scorer or run in this process loaded. The process-wide record keeps both."""
    before = dict(_LOADED)
    _LOADED.clear()
    try:
        yield
    finally:
        mine = dict(_LOADED)
        _LOADED.clear()
        _LOADED.update({**before, **mine})
