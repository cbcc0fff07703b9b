"""`vistar dsl check`: exit 0 on a good file (warnings printed), 1 on errors."""
from typer.testing import CliRunner

from vistar.cli import app

runner = CliRunner()


def test_good_file_exits_zero_and_prints_mask_warnings(tmp_path):
    f = tmp_path / "p.vistar"
    f.write_text('# fine\na: [GD|TR] sign "OPEN"\nb: [SA|TR] sign "CLOSED" {set="hard"}\n')
    res = runner.invoke(app, ["dsl", "check", str(f)])
    assert res.exit_code == 0, res.output
    assert "2 prompts parsed, 0 errors, 1 warnings" in res.output
    assert f"warning: {f}:3: field 'angle': angle TR is not relevant to role SA" in res.output


def test_errors_exit_non_zero_with_location_and_caret(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text('{"id": "a", "prompt": "[GD|TR] no quotes"}\n{"id": "a", "prompt": "[GD|TR] \\"X\\""}\n'
                 '{"id": "c", "prompt": "[GD|TR] x {text=}"}\n')
    res = runner.invoke(app, ["dsl", "check", str(f)])
    assert res.exit_code == 1
    assert f"error: {f}:1: field 'text': angle TR requires control key 'text'" in res.output
    assert f"error: {f}:2: field 'id': duplicate id 'a'" in res.output
    col = '{"id": "c", "prompt": "[GD|TR] x {text=}"}'.index("}") + 1
    assert f"error: {f}:3:{col}: field 'prompt': unexpected '}}'" in res.output
    assert "  " + " " * (col - 1) + "^" in res.output.split("\n")
    assert "1 prompts parsed, 3 errors, 0 warnings" in res.output


def test_ontology_override_changes_validation(tmp_path):
    f = tmp_path / "p.vistar"
    f.write_text('a: [SA|TR] sign "OPEN"\n')
    onto = tmp_path / "o.yaml"
    onto.write_text("mask:\n  SA: [TR, CSE]\n")
    res = runner.invoke(app, ["dsl", "check", str(f), "--ontology", str(onto)])
    assert res.exit_code == 0 and "0 errors, 0 warnings" in res.output
    onto.write_text("mask: [1, 2]\n")
    res = runner.invoke(app, ["dsl", "check", str(f), "--ontology", str(onto)])
    assert res.exit_code == 2 and "'mask' must be a mapping" in res.output
