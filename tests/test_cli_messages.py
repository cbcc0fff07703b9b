"""User input in messages is escaped, long prompt lines are refused by line, parsing memory is bounded, and the
exit codes of `dsl check` and `merge` (docs/cli.md)."""
import json
import tracemalloc

import pytest
from typer.testing import CliRunner

from tests.support import engine_plugins
from tests.support.run_inputs import png, prompts
from vistar.cli import app
from vistar.cli.common import printable
from vistar.prompts_dsl import read_prompts
from vistar.prompts_dsl.files import MAX_LINE_BYTES

ESC_LINE = 'evil: [GD|TR] \x1b[2J\x1b]0;owned\x07 title \u202e {'  # clear screen, set title, bidi override; unparsable


@pytest.fixture
def fake(monkeypatch):
    engine_plugins.install(monkeypatch)
    return engine_plugins


def test_printable_escapes_controls_and_bidi_but_keeps_text_and_line_breaks():
    assert printable("a\x1b[31mb\x9b\u202ec\td\né") == "a\\x1b[31mb\\x9b\\u202ec\td\né"


def test_control_bytes_of_a_prompt_file_never_reach_the_terminal(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "ok.png")
    p = prompts(tmp_path / "p.vistar", ['ok: [GD|TR] "A"', ESC_LINE])
    for args in (["dsl", "check", str(p)],
                 ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "run")]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code in (1, 3), res.output  # dsl check: FINDINGS; score: PARTIAL (one invalid prompt)
        assert not any(ch in res.output for ch in "\x1b\x07\u202e"), repr(res.output)
        assert "\\x1b[2J\\x1b]0;owned\\x07 title \\u202e" in res.output  # escaped, still readable
    raw = (tmp_path / "run" / "problems.jsonl").read_text(encoding="utf-8")
    assert not any(ch in raw for ch in "\x1b\x07\u202e")  # JSON-escaped on disk ...
    problem = next(json.loads(line) for line in raw.splitlines() if "evil" in line)
    assert "\x1b[2J\x1b]0;owned\x07 title \u202e" in problem["message"]  # ... and the raw text when read back


def test_a_line_over_the_bound_is_an_error_naming_it_and_the_others_are_read(tmp_path):
    p = tmp_path / "p.vistar"
    long_line = "b: [GD|TR] " + "w" * MAX_LINE_BYTES
    p.write_text(f'a: [GD|TR] x\n{long_line}\nc: [GD|TR] y\n', encoding="utf-8")
    parsed = read_prompts(p)
    assert [q.id for q in parsed.prompts] == ["a", "c"]
    assert [str(e) for e in parsed.errors] == [f"{p}:2: field 'line': {len(long_line)} bytes, longer than the "
                                               f"{MAX_LINE_BYTES} bytes a prompt line may hold"]
    at_bound = "d: [GD|TR] " + "w" * (MAX_LINE_BYTES - len("d: [GD|TR] "))
    p.write_text(at_bound + "\n", encoding="utf-8")
    assert [q.id for q in read_prompts(p).prompts] == ["d"]  # exactly the bound is allowed


LINE_SHAPES = {  # (start, repeated unit, end) of a line just under the bound
    "core": ('a: [GD|TR] ', "word ", ""),
    "string": ('a: [GD|TR] x {text="', "word ", '"}'),
    "numbers": ('a: [GD|TR] x {k=[', "1,", "1]}"),   # the most tokens per byte
    "strings": ('a: [GD|TR] x {k=[', '"a",', '"a"]}'),
    "pairs": ('a: [GD|TR] x {', "k{}=1,", "z=1}"),   # a key per 5-6 bytes
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", LINE_SHAPES)
def test_parsing_memory_stays_within_20x_the_line(tmp_path, shape):
    """The peak Python allocation while reading a file of one line just under the bound is at most 20 times the
    line, whatever the line holds (it was ~220x for text, the regex engine keeping state per character, and
    up to ~240x for control values, one token object each)."""
    read_prompts(prompts(tmp_path / "warm.vistar", ['w: [GD|TR] x {k=[1], s="t"}']))  # parser tables built once
    start, unit, end = LINE_SHAPES[shape]
    parts, size, i = [start], len(start) + len(end), 0
    while size + len(unit.format(i)) + 8 < MAX_LINE_BYTES:
        parts.append(unit.format(i))
        size, i = size + len(parts[-1]), i + 1
    line = "".join(parts) + end
    p = prompts(tmp_path / "p.vistar", [line])
    tracemalloc.start()
    try:
        parsed = read_prompts(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(parsed.prompts) == 1 and not parsed.errors, parsed.errors
    assert peak <= 20 * len(line), f"{peak / len(line):.1f}x the line"


def test_dsl_check_exit_codes(tmp_path):
    run = CliRunner().invoke
    assert run(app, ["dsl", "check", str(prompts(tmp_path / "ok.vistar", ['a: [GD|TR] x {text="x"}']))]).exit_code == 0
    assert run(app, ["dsl", "check", str(prompts(tmp_path / "bad.vistar", ["a: [GD|TR] x {"]))]).exit_code == 1
    empty = run(app, ["dsl", "check", str(prompts(tmp_path / "empty.vistar", ["# nothing here"]))])
    assert empty.exit_code == 4 and "holds no prompt" in empty.output
    assert run(app, ["dsl", "check", str(tmp_path / "missing.vistar")]).exit_code == 2


@pytest.mark.slow
def test_merge_exit_codes(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    png(tmp_path / "imgs" / "m" / "b.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B" {stage="fail"}'])
    good = prompts(tmp_path / "good.vistar", ['a: [GD|TR] "A"'])
    run = CliRunner().invoke
    assert run(app, ["score", str(tmp_path / "imgs"), "--prompts", str(good), "--out", str(tmp_path / "g")]).exit_code == 0
    assert run(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "e")]).exit_code == 3
    assert run(app, ["merge", str(tmp_path / "g"), "--out", str(tmp_path / "mg")]).exit_code == 0
    partial = run(app, ["merge", str(tmp_path / "e"), "--out", str(tmp_path / "me")])
    assert partial.exit_code == 3 and partial.output.strip().splitlines()[-1] == "partial: 2 error rows; exit 3"
    assert run(app, ["merge", str(tmp_path / "e"), "--out", str(tmp_path / "me2"), "--partial-ok"]).exit_code == 0
    assert run(app, ["merge", str(tmp_path / "e"), "--out", str(tmp_path / "me3"), "--bogus"]).exit_code == 2


def test_merging_runs_without_rows_exits_4(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    empty = prompts(tmp_path / "p.vistar", ["# no prompt yet"])
    run = CliRunner().invoke
    assert run(app, ["score", str(tmp_path / "imgs"), "--prompts", str(empty), "--out", str(tmp_path / "r")]).exit_code == 4
    res = run(app, ["merge", str(tmp_path / "r"), "--out", str(tmp_path / "m")])
    assert res.exit_code == 4 and "the source runs hold no row" in res.output


@pytest.mark.slow
def test_a_duplicate_key_after_thousands_of_pairs_is_located():
    """The control block is read pair by pair; a duplicate is still reported at its own column (and the tree
    built to locate it, 8,000 pairs deep, does not exhaust Python's recursion limit)."""
    from vistar.prompts_dsl import PromptSyntaxError, parse_prompt

    text = '[GD|TR] x {' + ",".join(f"k{i}=1" for i in range(8000)) + ',k5=2}'
    with pytest.raises(PromptSyntaxError) as err:
        parse_prompt(text)
    assert err.value.message == "duplicate control key 'k5'" and err.value.column == text.rindex("k5=") + 1


def test_a_model_folder_name_is_escaped_in_the_summary_table(tmp_path, fake):
    png(tmp_path / "imgs" / "m\x1b[31m[bold]" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "m\\x1b[31m[bold]" in res.output  # escaped, and not read as markup
