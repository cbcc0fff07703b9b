"""The default ontology as the issue specifies it, and user overrides deep-merged over it."""
import pytest
import yaml
from typer.testing import CliRunner

from vistar.cli import app
from vistar.ontology import Ontology, OntologyError

MASK = {"GD": ["TR", "SF", "CSE", "MA", "GC"], "SA": ["CSE", "CPA", "LI", "PSC"], "MS": ["TR", "MA", "CUL", "CPA"],
        "IL": ["SF", "CUL", "LI", "GC"], "PH": ["LI", "PSC", "GC", "MA"], "GA": ["PSC", "GC", "CPA", "MA"],
        "ED": ["TR", "CSE", "PSC"]}


def test_default_roles_angles_and_28_pair_mask():
    onto = Ontology.load()
    assert list(onto.roles) == ["GD", "SA", "MS", "IL", "PH", "GA", "ED"]
    assert set(onto.angles) == {"TR", "LI", "CSE", "CPA", "PSC", "GC", "SF", "CUL", "MA"}
    assert {a for a, s in onto.angles.items() if s["family"] == "hwpq"} == {"SF", "CUL", "MA"}
    assert onto.mask == MASK and len(onto.pairs) == 28
    assert onto.role_weights("ED") == pytest.approx({"TR": 1 / 3, "CSE": 1 / 3, "PSC": 1 / 3})
    assert onto.metric_params("TR")["w_char"] == 0.5 and "w_char" in onto.tunable("TR")


def _write(tmp_path, text, name="o.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_deep_merge_changes_only_what_the_user_wrote(tmp_path):
    base = Ontology.load()
    onto = Ontology.load(_write(tmp_path, "metrics:\n  TR:\n    params:\n      w_char: 0.8\nmask:\n  ED: [TR]\n"
                                          "roles:\n  XX: Extra role\n"))
    assert onto.metric_params("TR") == {**base.metric_params("TR"), "w_char": 0.8}
    assert onto.tunable("TR") == base.tunable("TR")
    assert onto.mask["ED"] == ["TR"] and onto.mask["GD"] == MASK["GD"]  # lists replace, mappings merge
    assert onto.roles["XX"] == "Extra role" and onto.roles["GD"] == "Graphic Designer"
    assert onto.hash != base.hash and Ontology.load().hash == base.hash


def test_null_deletes_and_later_files_win(tmp_path):
    first = _write(tmp_path, "mask:\n  ED: null\nroles:\n  ED: null\n", "a.yaml")
    second = _write(tmp_path, "metrics:\n  TR:\n    params:\n      w_char: 0.3\n", "b.yaml")
    third = _write(tmp_path, "metrics:\n  TR:\n    params:\n      w_char: 0.9\n", "c.yaml")
    onto = Ontology.load(first, overrides=[second, third])
    assert "ED" not in onto.roles and "ED" not in onto.mask and len(onto.pairs) == 25
    assert onto.metric_params("TR")["w_char"] == 0.9


def test_role_weights_are_renormalised_over_the_mask(tmp_path):
    onto = Ontology.load(_write(tmp_path, "role_weights:\n  GD: {TR: 2, GC: 1}\n  ED: {TR: 0, CSE: 3, PSC: 1}\n"))
    # GD: TR raw 2, GC raw 1 (its default weight 0 overridden), the three others raw 1 -> 2/6 and 1/6
    assert onto.role_weights("GD") == pytest.approx({"TR": 2 / 6, "SF": 1 / 6, "CSE": 1 / 6, "MA": 1 / 6, "GC": 1 / 6})
    assert onto.role_weights("ED") == pytest.approx({"TR": 0.0, "CSE": 0.75, "PSC": 0.25})
    assert sum(onto.role_weights("GD").values()) == pytest.approx(1.0)


@pytest.mark.parametrize("text, says", [
    ("role_weights:\n  ED: {TR: 0, CSE: 0, PSC: 0}\n", "role_weights.ED: weights over"),
    ("role_weights:\n  ED: {LI: 1}\n", "role_weights.ED.LI: LI is not in ED's mask"),
    ("role_weights:\n  ED: {TR: -1}\n", "role_weights.ED.TR: weight must be a finite number >= 0"),
    ("role_weights:\n  ED: {TR: heavy}\n", "role_weights.ED.TR"),
    ("mask:\n  GD: [TR, XYZ]\n", "mask.GD: unknown angle 'XYZ'"),
    ("mask:\n  QQ: [TR]\n", "mask.QQ: unknown role"),
    ("angles:\n  TR: {family: magic}\n", "angles.TR.family"),
    ("required_keys:\n  TR: text\n", "required_keys.TR"),
    ("- just a list\n", "must be a YAML mapping"),
    ("roles: [\n", "cannot read ontology"),
    ("features:\n  ocr: 5\n", "features.ocr: must be a mapping"),          # would fail every image's row mid-run
    ("metrics:\n  TR: {params: 3}\n", "metrics.TR.params: must be a mapping"),
    ("features: 5\n", "features: must be a mapping"),
])
def test_bad_overrides_are_named_errors(tmp_path, text, says):
    with pytest.raises(OntologyError, match=None) as info:
        Ontology.load(_write(tmp_path, text))
    assert says in str(info.value)


def test_ontology_show_prints_the_merged_yaml_and_weights(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["ontology", "show"])
    assert res.exit_code == 0
    shown = yaml.safe_load(res.stdout)
    assert shown == Ontology.load().data
    user = _write(tmp_path, "role_weights:\n  ED: {TR: 2}\n")
    res = runner.invoke(app, ["ontology", "show", "--ontology", str(user)])
    assert yaml.safe_load(res.stdout)["role_weights"] == {**Ontology.load().data["role_weights"], "ED": {"TR": 2}}
    res = runner.invoke(app, ["ontology", "show", "--ontology", str(user), "--weights"])
    assert res.exit_code == 0
    ed_row = next(line for line in res.stdout.splitlines() if line.startswith("│ ED "))
    assert "0.500" in ed_row and ed_row.count("0.250") == 2


def test_an_override_that_is_not_utf8_is_a_named_error(tmp_path):
    path = tmp_path / "o.yaml"
    path.write_bytes("role_weights:\n  ED: {TR: 2}  # poids d\xe9finis\n".encode("latin-1"))
    with pytest.raises(OntologyError, match="o.yaml: cannot read ontology"):
        Ontology.load(path)


@pytest.mark.parametrize("text, field, want", [
    ("metrics:\n  TR:\n    params:\n      w_char: x\n", "metrics.TR.params.w_char", "a number"),
    ("features:\n  ocr:\n    use_cls: 1\n", "features.ocr.use_cls", "true or false"),
    ("features:\n  ocr:\n    det_limit_side: large\n", "features.ocr.det_limit_side", "a number"),
    ("features:\n  ocr:\n    runtime: [openvino]\n", "features.ocr.runtime", "a string"),
])
def test_overlay_value_of_the_wrong_kind_names_the_field(tmp_path, text, field, want):
    path = _write(tmp_path, text)
    with pytest.raises(OntologyError, match=rf"{path}: {field} must be {want}"):
        Ontology.load(path)


def test_overlay_numbers_may_change_int_float_and_new_keys_are_free(tmp_path):
    onto = Ontology.load(_write(tmp_path, "metrics:\n  TR:\n    params:\n      w_char: 1\n      extra: [1, 2]\n"))
    assert onto.metric_params("TR")["w_char"] == 1 and onto.metric_params("TR")["extra"] == [1, 2]


def test_scientific_notation_yaml_reads_as_text_is_taken_as_the_number(tmp_path):
    """YAML 1.1 reads `1e-1` (no dot) as a string; a parameter whose default is a number takes it as 0.1."""
    onto = Ontology.load(_write(tmp_path, "metrics:\n  TR:\n    params:\n      w_char: 1e-1\n"))
    assert onto.metric_params("TR")["w_char"] == 0.1
    onto = Ontology.load(_write(tmp_path, "features:\n  ocr:\n    det_limit_side: '640'\n", "q.yaml"))
    assert onto.data["features"]["ocr"]["det_limit_side"] == 640 and isinstance(onto.data["features"]["ocr"]["det_limit_side"], int)


def test_the_kind_is_checked_against_the_shipped_default_not_an_earlier_overlay(tmp_path):
    first = _write(tmp_path, "metrics:\n  TR:\n    params:\n      w_char: 0.7\n", "a.yaml")
    second = _write(tmp_path, "metrics:\n  TR:\n    params:\n      w_char: x\n", "b.yaml")
    with pytest.raises(OntologyError, match=r"b.yaml: metrics.TR.params.w_char must be a number \(the default is 0.5\)"):
        Ontology.load(first, overrides=[second])
