"""Typed parameters: each metric and stage parses its ontology block into a frozen dataclass when the run is planned.
An unknown key or a wrong type stops `vistar score` with exit 2, naming the key and the file that set it, before
the run folder exists; the shipped ontology parses into every registered class."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import pytest
from typer.testing import CliRunner

from tests.support.run_inputs import png, prompts
from vistar.api import ParamsError, parse
from vistar.cli import app
from vistar.engine import registry
from vistar.engine.params import check_params, metric_params
from vistar.metrics.cpa_params import RoleWeights
from vistar.metrics.li_params import LightAnchor
from vistar.ontology import SHIPPED, Ontology, OntologyError


@dataclass(frozen=True)
class Inner:
    weight: float
    label: str | None = None


@dataclass(frozen=True)
class Probe:
    ratio: float
    count: int
    on: bool
    mode: Literal["fast", "exact"]
    names: tuple[str, ...]
    point: tuple[float, float]
    inner: Mapping[str, Inner]
    nested: Inner
    optional: int | None = None
    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"count must be >= 0, got {self.count}")


GOOD = {"ratio": 1, "count": 3, "on": False, "mode": "exact", "names": ["a", "b"], "point": [0.5, 2],
        "inner": {"x": {"weight": 0.25}}, "nested": {"weight": 2, "label": "n"}, "words": {"w": ["one", "two"]}}


def test_a_block_becomes_its_dataclass_with_values_as_given():
    got = parse(Probe, GOOD, "metrics.P.params")
    assert got == Probe(1, 3, False, "exact", ("a", "b"), (0.5, 2), {"x": Inner(0.25)}, Inner(2, "n"), None,
                        {"w": ("one", "two")})
    assert type(got.ratio) is int           # an int is a number: kept as written, so a score cannot move
    assert dataclasses.is_dataclass(got) and got.optional is None


@pytest.mark.parametrize("change, key, message", [
    ({"ratoi": 1}, "metrics.P.params.ratoi", "unknown parameter (known: count, inner, mode, names, nested, "),
    ({"ratio": "1"}, "metrics.P.params.ratio", "must be a number, not '1'"),
    ({"ratio": True}, "metrics.P.params.ratio", "must be a number, not True"),
    ({"count": 2.5}, "metrics.P.params.count", "must be an integer, not 2.5"),
    ({"on": "false"}, "metrics.P.params.on", "must be true or false, not 'false'"),
    ({"mode": "quick"}, "metrics.P.params.mode", "must be one of 'fast', 'exact', not 'quick'"),
    ({"names": "a"}, "metrics.P.params.names", "must be a list, not 'a'"),
    ({"names": ["a", 1]}, "metrics.P.params.names[1]", "must be a string, not 1"),
    ({"point": [1, 2, 3]}, "metrics.P.params.point", "must be a list of 2 values, not [1, 2, 3]"),
    ({"inner": {"x": {"wieght": 1}}}, "metrics.P.params.inner.x.wieght", "unknown parameter (known: label, weight)"),
    ({"inner": {"x": {}}}, "metrics.P.params.inner.x.weight", "missing (this parameter has no default)"),
    ({"nested": 3}, "metrics.P.params.nested", "must be a mapping of parameters, not 3"),
    ({"optional": "x"}, "metrics.P.params.optional", "must be an integer or null, not 'x'"),
    ({"count": -1}, "metrics.P.params", "count must be >= 0, got -1"),
])
def test_a_bad_entry_is_named_by_its_key(change, key, message):
    with pytest.raises(ParamsError) as caught:
        parse(Probe, {**GOOD, **change}, "metrics.P.params")
    assert caught.value.key == key and str(caught.value).startswith(f"{key}: {message}")


def test_a_missing_key_without_default_is_refused_and_none_is_an_empty_block():
    with pytest.raises(ParamsError, match=r"metrics.P.params.ratio: missing"):
        parse(Probe, {k: v for k, v in GOOD.items() if k != "ratio"}, "metrics.P.params")
    assert parse(Inner, {"weight": 1.5}, "x") == Inner(1.5)
    with pytest.raises(ParamsError, match="x.weight: missing"):
        parse(Inner, None, "x")


def test_the_shipped_ontology_parses_into_every_registered_class():
    """Every metric and stage of the registry declares its parameters, and the shipped blocks fit them exactly."""
    onto = Ontology.load()
    check_params(onto)
    for name in ("TR", "CSE", "PSC", "GC", "LI", "CPA"):
        assert registry.metric(name).params is not None, name
        fields = {f.name for f in dataclasses.fields(registry.metric(name).params)}
        assert set(onto.metric_params(name)) <= fields, name
    for name in registry.FEATURES:
        stage = registry.feature_stage(name)
        if name in onto.data["features"]:
            assert stage.params is not None, name
            assert set(onto.data["features"][name]) <= {f.name for f in dataclasses.fields(stage.params)}, name
    li, cpa = metric_params(onto, "LI"), metric_params(onto, "CPA")
    assert li.anchors[0] == LightAnchor("light from the upper left", (-0.6428, 0.766, 0.0))
    assert cpa.role_weights["MS"] == RoleWeights(0.3, 0.2, 0.5) and cpa.posture_synonyms["upright"] == ("upright",)


def test_the_file_that_set_a_key_is_named(tmp_path):
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text("metrics:\n  TR:\n    params:\n      w_char: 0.6\n")
    second.write_text("metrics:\n  CPA:\n    params:\n      role_weights:\n        SA: {w_x: 1}\n")
    onto = Ontology.load(first, overrides=[second])
    assert onto.source_of("metrics.TR.params.w_char") == str(first)
    assert onto.source_of("metrics.CPA.params.role_weights.SA.w_x") == str(second)
    assert onto.source_of("metrics.TR.params") == str(first)
    assert onto.source_of("metrics.TR.params.scripts") == SHIPPED
    assert onto.source_of("metrics.GC.params.lbp_tiles") == SHIPPED
    with pytest.raises(OntologyError, match=rf"^{second}: metrics.CPA.params.role_weights.SA.w_x: unknown parameter"):
        check_params(onto)


def _score(tmp_path, overlay: str, *extra: str):
    png(tmp_path / "imgs" / "m1" / "p1.png")
    p = prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"'])
    bad = tmp_path / "bad.yaml"
    bad.write_text(overlay)
    return CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "run"),
                                    "--ontology", str(bad), *extra])


@pytest.mark.parametrize("overlay, named", [
    ("metrics:\n  TR:\n    params:\n      w_chr: 0.7\n", "metrics.TR.params.w_chr: unknown parameter"),
    ("features:\n  pose:\n    max_people: 2.5\n", "features.pose.max_people: must be an integer, not 2.5"),
    ("metrics:\n  LI:\n    params:\n      anchors: [{phrase: up, vector: [0, 1]}]\n",
     "metrics.LI.params.anchors[0].vector: must be a list of 3 values"),
    ("features:\n  depth:\n    precision: half\n", "features.depth.precision: must be one of 'auto', 'fp32', 'tf32', 'bf16', 'fp16'"),
    ("metrics:\n  TR:\n    params:\n      w_char: null\n", "metrics.TR.params.w_char: missing (this parameter has no default)"),
])
def test_score_refuses_a_bad_overlay_with_exit_2_naming_key_and_file(tmp_path, overlay, named):
    """Through the CLI: the unknown key or the wrong type is named with the file, and nothing is written."""
    res = _score(tmp_path, overlay)
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert f"bad.yaml: {named}" in text.replace(str(tmp_path) + "/", "")
    assert not (tmp_path / "run").exists()


def test_a_good_overlay_scores(tmp_path):
    res = _score(tmp_path, "metrics:\n  TR:\n    params:\n      w_char: 0.7\n")
    assert res.exit_code in (0, 1), res.output          # 1: the blank image reads no text; scored all the same
    assert (tmp_path / "run" / "scores.parquet").exists()


def test_the_python_scorer_refuses_a_bad_overlay_as_the_cli_does(tmp_path):
    """`vistar.Scorer` parses the blocks when it is built: the same message, as an OntologyError (a ValueError)."""
    from vistar import Scorer

    bad = tmp_path / "bad.yaml"
    bad.write_text("metrics:\n  TR:\n    params:\n      w_chr: 0.7\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: metrics\.TR\.params\.w_chr: unknown parameter"):
        Scorer(angles=["TR"], ontology=bad)
