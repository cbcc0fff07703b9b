"""Parse errors name file, line and column and put the caret under the offending character."""
import json

import pytest

from vistar.prompts_dsl import PromptSyntaxError, parse_prompt, read_prompts
from vistar.prompts_dsl.validate import as_issue


def _caret_col(excerpt_line: str) -> int:
    return len(excerpt_line) - 2  # excerpt lines are indented by two spaces; the caret is the last char


@pytest.mark.parametrize("text, column, says", [
    ("[GD TR] x", 5, "expected '|'"),                      # the T where '|' belongs
    ("[GD|TR] a}b", 10, "unescaped '}'"),
    ("[GD|TR] a\\b", 10, "lone backslash"),
    ("[GD|TR] x {a=1", 15, "end of prompt"),               # one past the end
    ("[GD|TR] x {a=b}", 14, "expected"),
    ("[GD|TR] x {a=1, a=2}", 17, "duplicate control key 'a'"),
    ("[GD|TR] a \\{ b } c", 16, "unescaped '}'"),                      # an escaped '{' opens no block
    ("[GD|TR] a { b } c", 15, "(if the '{' at column 11 is text, not controls, write '\\{')"),
    ("[GD|TR] a \\\\{ b } c", 17, "the '{' at column 13 is text"),     # '\\' escapes the backslash, not the brace
])
def test_string_errors_point_at_the_column(text, column, says):
    with pytest.raises(PromptSyntaxError) as info:
        parse_prompt(text)
    err = info.value
    assert err.column == column and says in err.message
    lines = str(err).split("\n")
    assert lines[0].startswith(f"<string>:{column}: ")
    assert lines[1] == "  " + text
    assert _caret_col(lines[2]) == column and lines[2].strip() == "^"


def test_vistar_file_errors_name_file_line_column(tmp_path):
    f = tmp_path / "p.vistar"
    f.write_text("# header comment\n\nok1: [GD|TR] fine \"A\"\n  p2 :  [GD|TR] x {text=\"A\" n=1}\np3: [GD|TR] 日本 }\n"
                 "no id here\n", encoding="utf-8")
    read = read_prompts(f)
    assert [p.id for p in read.prompts] == ["ok1"]
    e2, e3, e4 = read.errors
    line4 = '  p2 :  [GD|TR] x {text="A" n=1}'
    assert (e2.location, e2.column, e2.prompt_id) == (f"{f}:4", line4.index("n=1") + 1, "p2")
    assert str(e2).startswith(f"{f}:4:{line4.index('n=1') + 1}: unexpected 'n'")
    assert (e3.location, e3.column) == (f"{f}:5", len("p3: [GD|TR] 日本 }"))
    caret = str(e3).split("\n")[2]
    assert caret == "  " + " " * len("p3: [GD|TR] ") + "    " + " " + "^"  # CJK characters are two cells wide
    assert (e4.location, e4.column, e4.prompt_id) == (f"{f}:6", 3, None)  # after "no", where ':' was expected
    assert "expected ':' after the id" in e4.message


def test_jsonl_errors_point_into_the_raw_line(tmp_path):
    f = tmp_path / "p.jsonl"
    good = {"id": "a", "prompt": "[GD|TR] fine \"A\"", "set": "core"}
    bad = {"id": "b", "prompt": "[GD|TR] \"é\" \\\\ {text=1 x}"}
    raw_bad = json.dumps(bad)  # é -> \u00e9, a quote -> \", a backslash -> \\\\ : columns shift in the raw line
    f.write_text(json.dumps(good) + "\n" + raw_bad + "\n" + '{"id": "c", "prompt": 3}\n{"id": "d" "prompt": "x"}\n[1]\n',
                 encoding="utf-8")
    read = read_prompts(f)
    assert [p.id for p in read.prompts] == ["a"] and read.prompts[0].metadata == {"set": "core"}
    syntax, not_string, bad_json, not_object = read.errors
    assert syntax.location == f"{f}:2" and syntax.field == "prompt" and syntax.prompt_id == "b"
    assert syntax.column == raw_bad.index(" x}") + 2  # the 'x' in the raw JSON text
    assert raw_bad[syntax.column - 1] == "x"
    assert str(syntax).split("\n")[1] == "  " + raw_bad
    assert (not_string.field, not_string.location) == ("prompt", f"{f}:3")
    assert (bad_json.field, bad_json.column) == ("record", len('{"id": "d" ') + 1)
    assert (not_object.field, not_object.location) == ("record", f"{f}:5")
    assert "field 'prompt'" in str(as_issue(syntax))


def test_bom_crlf_and_line_separator_in_core(tmp_path):
    f = tmp_path / "p.vistar"
    f.write_bytes("\ufeffa: [GD|TR] one\u2028two \"X\"\r\nb: [GD|TR] \"Y\"\r\n".encode())
    read = read_prompts(f)
    assert read.errors == [] and [p.id for p in read.prompts] == ["a", "b"]
    assert read.prompts[0].core == "one\u2028two \"X\""


def test_invalid_ids_and_numeric_jsonl_ids(tmp_path):
    (tmp_path / "a.vistar").write_text("-x: [GD|TR] \"A\"\n")
    (err,) = read_prompts(tmp_path / "a.vistar").errors
    assert err.field == "id" and "invalid id '-x'" in str(err)
    (tmp_path / "a.jsonl").write_text('{"id": 17, "prompt": "[GD|TR] \\"A\\""}\n{"id": true, "prompt": "[GD|TR]"}\n')
    read = read_prompts(tmp_path / "a.jsonl")
    assert [p.id for p in read.prompts] == ["17"] and read.errors[0].field == "id"


def test_unreadable_file_is_an_error_not_a_crash(tmp_path):
    (err,) = read_prompts(tmp_path / "missing.vistar").errors
    assert err.field == "file" and "cannot read" in str(err)
    (tmp_path / "u16.vistar").write_text('a: [GD|TR] "A"\n', encoding="utf-16")
    (err,) = read_prompts(tmp_path / "u16.vistar").errors
    assert err.field == "encoding" and "UTF-16" in str(err)


def test_a_line_that_is_not_utf8_costs_only_that_line(tmp_path):
    f = tmp_path / "latin1.vistar"
    f.write_bytes('a: [GD|TR] Caf\xe9 "Caf\xe9"\nb: [GD|TR] "B"\r\nc: [GD|TR] "C"\rz\xff: x\n'.encode("latin-1"))
    read = read_prompts(f)
    assert [p.id for p in read.prompts] == ["b", "c"]  # CRLF and a lone CR end lines as LF does
    first, last = read.errors
    assert (first.location, first.column, first.field, first.prompt_id) == (f"{f}:1", 15, "encoding", "a")
    assert "byte 0xE9 is not UTF-8" in str(first) and (last.location, last.prompt_id) == (f"{f}:4", None)
    j = tmp_path / "latin1.jsonl"
    j.write_bytes(b'{"id": "a", "prompt": "[GD|TR] Caf\xe9"}\n{"id": "b", "prompt": "[GD|TR] \\"B\\""}\n')
    read = read_prompts(j)
    assert [p.id for p in read.prompts] == ["b"] and read.errors[0].prompt_id == "a"
    assert read.errors[0].column == len('{"id": "a", "prompt": "[GD|TR] Caf') + 1


def test_lone_surrogates_and_overflowing_numbers_are_errors(tmp_path):
    for text, column, says in (('[GD|TR] x {t="\\ud800 a"}', 14, "without its pair"),
                               ("[GD|TR] x {n=1e999}", 14, "number 1e999 is out of range")):
        with pytest.raises(PromptSyntaxError, match=says) as exc:
            parse_prompt(text)
        assert exc.value.column == column
    assert parse_prompt('[GD|TR] x {t="\\ud83d\\ude00"}').controls == {"t": "\U0001F600"}  # a pair is one character
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps({"id": "a", "prompt": "[GD|TR] \ud800"}) + "\n" + json.dumps({"id": "b", "prompt": "[GD|TR] \"B\"", "src": "\udc80"})
                 + '\n{"ID": "c", "prompt": "[GD|TR]"}\n[{"id": "d"}]\n')
    read = read_prompts(f)
    assert read.prompts == [] and [(e.field, e.prompt_id) for e in read.errors] == [("record", "a"), ("record", "b"), ("id", None),
                                                                                     ("record", None)]
    assert "missing" in str(read.errors[2]) and "one {...} per line" in str(read.errors[3])


def test_integers_past_a_float_are_out_of_range_at_their_column(tmp_path):
    for digits in (400, 5000):  # past 1.8e308; past Python's 4300-digit limit for int()
        with pytest.raises(PromptSyntaxError, match=f"number 999999999999...999999 \\({digits} characters\\) is out of range") as exc:
            parse_prompt("[GD|TR] x {a=1, n=" + "9" * digits + "}")
        assert exc.value.column == 19
    assert parse_prompt("[GD|TR] x {n=" + "9" * 300 + "}").controls == {"n": int("9" * 300)}  # within range: exact
    f = tmp_path / "big.jsonl"
    f.write_text(json.dumps({"id": "h", "prompt": "[GD|TR] x {n=" + "9" * 400 + "}"}) + "\n")
    (err,) = read_prompts(f).errors
    assert err.column == len('{"id": "h", "prompt": "[GD|TR] x {n=') + 1 and "out of range" in str(err)


def test_long_lines_show_the_part_around_the_column():
    core = "x" * 3000
    with pytest.raises(PromptSyntaxError) as exc:
        parse_prompt(f'[GD|TR] {core} {{t="A" zap}}')
    line, caret = exc.value.excerpt.split("\n")
    assert len(line) < 200 and line.startswith("  …") and line.endswith("zap}")
    assert line[_caret_col(caret) + 1] == "z"  # the caret still sits under the offending character


PRETTY_ARRAY = '[\n  {"id": "a",\n   "prompt": "[GD|TR] \\"A\\""},\n  {"id": "b", "prompt": "[GD|TR] \\"B\\""}\n]\n'


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
@pytest.mark.parametrize("text, says", [
    (PRETTY_ARRAY, "the file is a JSON array, not JSON Lines"),
    ("\ufeff\n  " + PRETTY_ARRAY, "the file is a JSON array, not JSON Lines"),   # BOM and blank lines first
    ('[{"id": "a", "prompt": "[GD|TR] \\"A\\""}]\n', "the file is a JSON array, not JSON Lines"),
    ('[\n  {"id": "a", "prompt": "[GD|TR] \\"A\\""},\n  {"id": "b", "prompt": "[GD|TR] \\"B\\"",\n', "JSON array"),  # cut off
    ('{\n  "prompts": [\n    {"id": "a", "prompt": "[GD|TR] \\"A\\""},\n    {"id": "b", "prompt": "[GD|TR] \\"B\\""}\n  ]\n}\n',
     "one JSON object written over several lines"),
])
def test_a_json_document_is_refused_as_a_whole_not_read_line_by_line(tmp_path, suffix, text, says):
    """Read line by line, `{"id": "b", ...}` (the last element, without a comma) loaded as a prompt among errors."""
    f = tmp_path / f"prompts{suffix}"
    f.write_text(text, encoding="utf-8")
    read = read_prompts(f)
    assert read.prompts == [] and len(read.errors) == 1
    (err,) = read.errors
    assert err.location == str(f) and err.field == "file" and says in str(err) and "one JSON object" in str(err)


def test_json_lines_with_one_or_many_records_still_read(tmp_path):
    f = tmp_path / "p.json"
    f.write_text('{"id": "a", "prompt": "[GD|TR] \\"A\\""}\n')
    assert [p.id for p in read_prompts(f).prompts] == ["a"]
    f.write_text('\n{"id": "a", "prompt": "[GD|TR] \\"A\\""}\n{"id": "b", "prompt": "[GD|TR] \\"B\\""}\n[1]\n')
    read = read_prompts(f)
    assert [p.id for p in read.prompts] == ["a", "b"] and "one {...} per line" in str(read.errors[0])
