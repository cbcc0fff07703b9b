"""What the README's set-up install (`pip install -e .`, no extras) can run: `vistar validate --angles TR`.

The suite runs with every extra installed, so the core install is simulated: a child process refuses to import
any module whose distributions are all outside the closure of pyproject.toml's core dependencies (their own
requirements, without extras, followed transitively, as pip would install them)."""
from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import importlib.abc, json, sys
blocked = set(json.loads(sys.argv.pop(1)))

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (not in the core install)", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
from vistar.cli import main
sys.argv[0] = "vistar"
main()
"""


def core_closure() -> set[str]:
    """Canonical names of the distributions `pip install -e .` installs."""
    wanted = [Requirement(r) for r in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]]
    seen: set[str] = set()
    while wanted:
        req = wanted.pop()
        name = canonicalize_name(req.name)
        if name in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        try:
            wanted += [Requirement(r) for r in md.distribution(name).requires or []]
        except md.PackageNotFoundError:
            continue
    return seen


def extras_only_modules() -> list[str]:
    core = core_closure()
    return sorted(module for module, dists in md.packages_distributions().items()
                  if module.isidentifier() and not module.startswith("_")
                  and not any(canonicalize_name(d) in core for d in dists) and module not in ("vistar", "tests"))


def test_the_simulation_refuses_what_only_an_extra_installs():
    blocked = extras_only_modules()
    assert {"torch", "transformers", "numba", "optuna", "httpx", "mediapipe"} <= set(blocked)
    assert not {"numpy", "PIL", "rapidocr", "onnxruntime", "matplotlib", "skimage", "cv2"} & set(blocked)


@pytest.mark.slow
def test_validate_tr_runs_on_the_core_install(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "VISTAR_HOME": str(tmp_path / "home")}
    child = subprocess.run([sys.executable, "-c", CHILD, json.dumps(extras_only_modules()), "validate", "--angles",
                            "TR", "--n", "1", "--json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=900)
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-3000:]
    rows = json.loads(child.stdout)["rows"]
    assert rows and not [r for r in rows if r["measure"] == "error"], rows
