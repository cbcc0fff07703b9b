"""The suite writes nothing outside temporary folders (it once left numba cache files under
/nonexistent/vistar-home/numba: tests pointed VISTAR_HOME at a made-up absolute path, and vistar derives its numba
cache from VISTAR_HOME). Three checks: the session's homes and caches are temporary (conftest), no test names a
VISTAR_HOME outside one, and a representative set of CLI runs writes only where its environment says."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TEMP = Path(tempfile.gettempdir()).resolve()

# Installed in every Python process of the child run (workers too) through sitecustomize: each write, folder
# creation, rename, link or removal outside ALLOWED is appended to AUDIT_LOG. Python-level only: a library writing
# from native code is kept in place by the redirected HOME and caches instead.
SITECUSTOMIZE = r'''
import os, sys, threading
_allowed = tuple(os.environ["VISTAR_AUDIT_ALLOWED"].split(os.pathsep))
_log = os.environ["VISTAR_AUDIT_LOG"]
_busy = threading.local()
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_NO_FD = (None, -1)   # a path relative to no directory descriptor

def _check(path):
    if isinstance(path, int) or path is None:
        return
    path = os.path.realpath(os.fsdecode(path))
    if not path.startswith(_allowed):
        fd = os.open(_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.write(fd, (path + "\n").encode("utf-8", "backslashreplace"))
        os.close(fd)

def _hook(event, args):
    if getattr(_busy, "on", False):
        return
    _busy.on = True
    try:
        if event == "open":
            path, mode, flags = args
            if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (isinstance(flags, int) and flags & _WRITE_FLAGS):
                _check(path)
        elif event == "os.mkdir" and args[2] in _NO_FD and not os.path.isdir(args[0]):  # exist_ok on a folder: no write
            _check(args[0])
        elif event in ("os.remove", "os.rmdir") and args[1] in _NO_FD:  # with a dir_fd: inside a tree checked whole
            _check(args[0])
        elif event in ("os.truncate", "shutil.rmtree"):
            _check(args[0])
        elif event == "os.rename" and args[2] in _NO_FD and args[3] in _NO_FD:
            _check(args[0])
            _check(args[1])
        elif event in ("os.link", "os.symlink", "shutil.copyfile", "shutil.move"):
            _check(args[1])
    finally:
        _busy.on = False

if os.environ.get("VISTAR_AUDIT_LOG"):
    sys.addaudithook(_hook)
'''

RUNS = [["score", "examples/images", "--prompts", "examples/prompts.vistar", "--out", "{tmp}/run", "--cpu-workers", "2"],
        ["report", "{tmp}/run"],
        ["validate", "--angles", "GC", "--n", "1"]]


def test_the_session_homes_and_caches_are_temporary():
    for name in ("HOME", "VISTAR_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR"):
        assert Path(os.environ[name]).resolve().is_relative_to(TEMP), (name, os.environ[name])
    assert "NUMBA_CACHE_DIR" not in os.environ   # numba's cache follows VISTAR_HOME


def _literal_vistar_homes(tree: ast.AST) -> list[tuple[int, str]]:
    """`setenv("VISTAR_HOME", "<literal>")` and `{"VISTAR_HOME": "<literal>"}`: a fixed path, not a temporary one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and getattr(node.func, "attr", "") == "setenv":
            key, value = node.args[:2]
        elif isinstance(node, ast.Dict):
            pairs = [(k, v) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value == "VISTAR_HOME"]
            if not pairs:
                continue
            key, value = pairs[0]
        else:
            continue
        if isinstance(key, ast.Constant) and key.value == "VISTAR_HOME" and isinstance(value, ast.Constant):
            found.append((node.lineno, value.value))
    return found


def test_no_test_points_vistar_home_at_a_fixed_path():
    fixed = {path.name: hits for path in sorted((REPO / "tests").glob("*.py"))
             if (hits := _literal_vistar_homes(ast.parse(path.read_text(encoding="utf-8"))))}
    assert fixed == {}


@pytest.mark.slow
def test_cli_runs_write_only_where_their_environment_says(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "outside.log"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update({"PYTHONPATH": os.pathsep.join([str(site), str(REPO)]), "PYTHONDONTWRITEBYTECODE": "1",
                "HOME": str(tmp_path / "home"), "VISTAR_HOME": str(tmp_path / "vistar-home"),
                "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
                "MPLCONFIGDIR": str(tmp_path / "mpl"), "TMPDIR": str(tmp_path / "t"), "VISTAR_AUDIT_LOG": str(log),
                "VISTAR_AUDIT_ALLOWED": os.pathsep.join([str(tmp_path.resolve()), "/dev/"])})
    (tmp_path / "t").mkdir()
    for args in RUNS:
        argv = [a.format(tmp=tmp_path) for a in args]
        done = subprocess.run([sys.executable, "-c", "import sys; from vistar.cli import main; sys.argv[0] = 'vistar'; main()",
                               *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode in (0, 3), (argv, done.stdout[-2000:], done.stderr[-2000:])
    outside = sorted(set(log.read_text().splitlines())) if log.exists() else []
    assert outside == [], outside
    numba_cache = tmp_path / "vistar-home" / "numba"
    assert numba_cache.is_dir() and any(numba_cache.rglob("*.nbi")), json.dumps(sorted(map(str, tmp_path.rglob("*")))[:50])
