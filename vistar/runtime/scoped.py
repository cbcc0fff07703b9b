"""Entries of a mapping set for the length of a `with` block, then put back as they were.

Why one helper: the engine sets `os.environ` around its fork server's start and the tests swap entries of
`sys.modules`; both must restore an entry that existed and remove one that did not (a sentinel, not None, marks
"absent": `sys.modules[name] = None` means something of its own).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

_ABSENT = object()


@contextlib.contextmanager
def scoped_entries(mapping: MutableMapping[str, Any], values: Mapping[str, Any]) -> Iterator[None]:
    """MAPPING updated with VALUES inside the block; every touched key back to its old value (or gone) after."""
    saved = {name: mapping.get(name, _ABSENT) for name in values}
    try:
        mapping.update(values)   # inside: a value refused halfway still puts back the keys set before it
        yield
    finally:
        for name, value in saved.items():
            if value is _ABSENT:
                mapping.pop(name, None)
            else:
                mapping[name] = value
