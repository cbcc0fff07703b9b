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
    (tmp_path / "x.vistar").write_bytes(b"a: [GD|TR] \xff\xfe\n")
    (err,) = read_prompts(tmp_path / "x.vistar").errors
    assert err.field == "file" and "cannot read" in str(err)
