"""The model catalogue (`vistar/data/models.yaml`) and where each model's weights are found on disk.

Lookup order for NAME: `--model-path NAME=PATH`, then `$VISTAR_HOME/models/NAME` (default
`~/.cache/vistar/models/NAME`), then the Hugging Face cache for HF sources. Never the network.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from .errors import MissingWeightError


@dataclass(frozen=True)
class ModelSpec:
    name: str
    library: str
    architecture: str
    source: str
    licence: str
    files: dict[str, str | None] = field(default_factory=dict)
    notes: str = ""
    random_init: dict | None = None   # full-size architecture for random-weight benchmarks (models/random_init.py)

    @property
    def is_hf(self) -> bool:
        return "://" not in self.source and "/" in self.source


@lru_cache(maxsize=1)
def catalog() -> dict[str, ModelSpec]:
    data = yaml.safe_load(resources.files("vistar.data").joinpath("models.yaml").read_text()) or {}
    return {name: ModelSpec(name=name, **spec) for name, spec in (data.get("models") or {}).items()}


def spec(name: str) -> ModelSpec:
    models = catalog()
    if name not in models:
        raise KeyError(f"unknown model '{name}' (known: {', '.join(sorted(models))})")
    return models[name]


def vistar_home() -> Path:
    return Path(os.environ.get("VISTAR_HOME", Path.home() / ".cache" / "vistar")).expanduser()


def model_dir(name: str) -> Path:
    return vistar_home() / "models" / name


def resolve_weight(name: str, model_paths: dict[str, str] | None = None) -> Path:
    """Local path of NAME's weights (a file or an HF-style folder); MissingWeightError if absent."""
    override = (model_paths or {}).get(name)
    if override:
        path = Path(override).expanduser()
        if not path.exists():
            raise MissingWeightError(name, f"--model-path {name}={override} does not exist")
        return path
    model = spec(name)
    local = model_dir(name)
    if local.exists() and any(local.iterdir()):
        absent = missing_files(model, local)
        if absent:  # an interrupted download leaves a non-empty folder (HF keeps `.cache/` there)
            raise MissingWeightError(name, f"'{absent[0]}' is missing from {local}; run `vistar models fetch {name}` "
                                           f"to finish the download, or pass `--model-path {name}=PATH`")
        return local
    if model.is_hf:
        cached = _hf_cache_snapshot(model.source)
        if cached is not None:
            return cached
    raise MissingWeightError(name)


def missing_files(model: ModelSpec, folder: Path) -> list[str]:
    """Catalogued files of MODEL that FOLDER lacks, sorted."""
    return sorted(rel for rel in model.files if not (folder / rel).is_file())


def _hf_cache_snapshot(repo_id: str) -> Path | None:
    """The snapshot `refs/main` names (what huggingface_hub itself loads), else the most recently written one."""
    hub = Path(os.environ.get("HF_HUB_CACHE") or Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "hub")
    repo = hub / f"models--{repo_id.replace('/', '--')}"
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    try:
        main = snapshots / (repo / "refs" / "main").read_text().strip()
    except OSError:
        main = None
    if main is not None and main.is_dir() and any(main.iterdir()):
        return main
    candidates = [p for p in snapshots.iterdir() if p.is_dir() and any(p.iterdir())]
    return max(candidates, key=lambda p: (p.stat().st_mtime, p.name)) if candidates else None
