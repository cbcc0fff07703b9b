"""Parse -> serialize -> parse is the identity, for arbitrary cores and control values."""
import json

import pytest
from hypothesis import given, settings, strategies as st

from vistar.prompts_dsl import Prompt, parse_prompt, read_prompts, serialize_prompt, write_vistar

codes = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,5}", fullmatch=True)
keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,6}", fullmatch=True)
# Any text without line breaks (a prompt is one line); surrounding whitespace is not part of the core.
cores = st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), max_size=40).map(str.strip)
strings = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)  # anything: escapes handle \n, ", \\
numbers = st.one_of(st.integers(min_value=-10**30, max_value=10**30), st.floats(allow_nan=False, allow_infinity=False))
scalars = st.one_of(strings, numbers)
values = st.one_of(scalars, st.lists(scalars, max_size=4))
prompts = st.builds(Prompt, role=codes, angle=codes, core=cores, controls=st.dictionaries(keys, values, max_size=4))


def _same(a: Prompt, b: Prompt) -> bool:
    return (a.role, a.angle, a.core, a.controls) == (b.role, b.angle, b.core, b.controls)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(prompts)
def test_parse_serialize_roundtrip(prompt):
    text = serialize_prompt(prompt)
    assert "\n" not in text
    back = parse_prompt(text)
    assert _same(back, prompt), text
    assert serialize_prompt(back) == text  # the canonical form is a fixed point


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(prompts, min_size=1, max_size=5))
def test_vistar_and_jsonl_files_roundtrip(tmp_path_factory, items):
    tmp = tmp_path_factory.mktemp("rt")
    items = [Prompt(p.role, p.angle, p.core, p.controls, id=f"p{i}") for i, p in enumerate(items)]
    write_vistar(items, tmp / "a.vistar")
    (tmp / "a.jsonl").write_text("".join(json.dumps({"id": p.id, "prompt": serialize_prompt(p), "set": "hard"}) + "\n"
                                         for p in items), encoding="utf-8")
    for name in ("a.vistar", "a.jsonl"):
        read = read_prompts(tmp / name)
        assert read.errors == []
        assert [p.id for p in read.prompts] == [p.id for p in items]
        assert all(_same(a, b) for a, b in zip(read.prompts, items))
    assert all(p.metadata == {"set": "hard"} for p in read_prompts(tmp / "a.jsonl").prompts)


def test_escapes_in_core_and_strings():
    p = parse_prompt(r'[GD|TR] a \{brace\} and \\ backslash "Q" {text="line\nnext \"q\" \\ \u00e9", n=-1.5e3, l=["a", 2]}')
    assert p.core == r'a {brace} and \ backslash "Q"'
    assert p.controls == {"text": 'line\nnext "q" \\ é', "n": -1500.0, "l": ["a", 2]}
    assert serialize_prompt(p) == r'[GD|TR] a \{brace\} and \\ backslash "Q" {text="line\nnext \"q\" \\ é", n=-1500.0, l=["a", 2]}'


def test_optional_parts_and_number_types():
    assert parse_prompt("[PH|LI]") == Prompt("PH", "LI", "", {}, source="<string>")
    p = parse_prompt("[PH|LI] {a=3, b=3.0, c=[], d=1e2,}")
    assert p.core == "" and p.controls == {"a": 3, "b": 3.0, "c": [], "d": 100.0}
    assert type(p.controls["a"]) is int and type(p.controls["b"]) is float
    assert serialize_prompt(p) == "[PH|LI] {a=3, b=3.0, c=[], d=100.0}"


def test_serializer_refuses_what_would_not_parse_back():
    import pytest

    for bad in (Prompt("GD", "TR", "x", {"a": float("nan")}), Prompt("GD", "TR", "x", {"a": [[1]]}),
                Prompt("GD", "TR", "x", {"a": True}), Prompt("GD", "TR", "a\nb"), Prompt("G D", "TR", "x"),
                Prompt("GD", "TR", "x", {"1a": 1}), Prompt("GD", "TR", "x", {"a": 10**400}),
                Prompt("GD", "TR", "x", {"a": [1, -(10**309)]})):
        with pytest.raises((ValueError, TypeError)):
            serialize_prompt(bad)
