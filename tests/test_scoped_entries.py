"""runtime.scoped_entries: the entries a block sets are put back exactly as they were, also on an exception."""
import os

import pytest

from vistar.runtime.scoped import scoped_entries


def test_existing_entries_come_back_and_new_ones_go():
    mapping = {"kept": "old", "other": "untouched"}
    with scoped_entries(mapping, {"kept": "new", "added": "x"}):
        assert mapping == {"kept": "new", "other": "untouched", "added": "x"}
    assert mapping == {"kept": "old", "other": "untouched"}


def test_an_entry_holding_none_is_restored_as_none_not_removed():
    # sys.modules[name] = None blocks an import: putting it back must keep the None
    mapping = {"blocked": None}
    with scoped_entries(mapping, {"blocked": "module"}):
        assert mapping["blocked"] == "module"
    assert mapping == {"blocked": None}


def test_restored_when_the_block_raises():
    mapping = {"a": 1}
    with pytest.raises(RuntimeError), scoped_entries(mapping, {"a": 2, "b": 3}):
        raise RuntimeError("boom")
    assert mapping == {"a": 1}


def test_os_environ_round_trip():
    name = "VISTAR_SCOPED_ENTRIES_PROBE"
    assert name not in os.environ
    with scoped_entries(os.environ, {name: "1"}):
        assert os.environ[name] == "1"
    assert name not in os.environ


def test_a_value_refused_halfway_leaves_no_entry_behind():
    # os.environ takes strings only: the first entry is set before the second is refused, and must go again
    first, second = "VISTAR_SCOPED_ENTRIES_FIRST", "VISTAR_SCOPED_ENTRIES_SECOND"
    with pytest.raises(TypeError), scoped_entries(os.environ, {first: "1", second: 2}):
        pass
    assert first not in os.environ and second not in os.environ
