"""Routing and registration come from the declarations: a metric runs on the angle it declares, whatever its
name; what cannot run (an angle no prompt has, a protocol registered by halves) is refused before any row."""
from __future__ import annotations

import pandas as pd
import pytest
from PIL import Image

from tests.support import toy_plugin
from vistar.engine import registry
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores
from vistar.prompts_dsl.model import Prompt


def _toy_tables(monkeypatch, metric="tests.support.toy_plugin:METRIC", name="brightness"):
    monkeypatch.setattr(registry, "FEATURES", {"toy_mean": "tests.support.toy_plugin:STAGE"})
    monkeypatch.setattr(registry, "METRICS", {name: metric})


def test_toy_metric_named_off_its_angle_runs_with_its_ontology_block(tmp_path, monkeypatch):
    """The documented steps: the module, its line in the import list, its ontology block."""
    _toy_tables(monkeypatch)
    img = tmp_path / "imgs" / "m" / "lamp.png"
    img.parent.mkdir(parents=True)
    Image.new("RGB", (8, 8), (100, 100, 100)).save(img)
    (tmp_path / "p.vistar").write_text('lamp: [GD|LI] a lamp {light="light from the upper left"}\n'
                                       'dark: [GD|LI] a lamp\n')
    Image.new("RGB", (8, 8), (100, 100, 100)).save(img.with_name("dark.png"))
    (tmp_path / "onto.yaml").write_text(toy_plugin.ONTOLOGY_BLOCK)
    run_score(ScoreConfig(tmp_path / "imgs", tmp_path / "p.vistar", tmp_path / "run", ontology=tmp_path / "onto.yaml"))
    rows = read_scores(tmp_path / "run").set_index("prompt_id")
    assert rows.loc["lamp", "metric"] == "brightness" and rows.loc["lamp", "angle"] == "LI"
    assert rows.loc["lamp", "status"] == "ok"
    assert rows.loc["lamp", "score"] == pytest.approx(100 / 255 * 0.5)
    assert rows.loc["dark", "status"] == "error" and "light" in rows.loc["dark", "error"]
    from vistar.report.build import build_report

    build_report(tmp_path / "run", tmp_path / "report", resamples=10)
    other = pd.read_csv(tmp_path / "report" / "tables" / "other_metrics.csv")
    assert other.to_dict("records") == [{"model": "m", "angle": "LI", "metric": "brightness",
                                         "mean": pytest.approx(100 / 255 * 0.5 * 100, abs=1e-4), "n_ok": 1, "n_error": 1,
                                         "n_skipped": 0}]
    assert "brightness" in (tmp_path / "report" / "report.md").read_text().split("## Other metrics")[1]


def test_metrics_for_angle_reads_the_declared_angle(monkeypatch):
    _toy_tables(monkeypatch)
    assert registry.metrics_for_angle("LI") == ["brightness"]
    assert registry.metrics_for_angle("brightness") == []


def test_metric_whose_angle_has_no_route_fails_at_registry_build(monkeypatch):
    from vistar.api import Metric

    monkeypatch.setattr(toy_plugin, "LOST", Metric("lost", "XYZ", "1", ("toy_mean",), toy_plugin._brightness),
                        raising=False)
    _toy_tables(monkeypatch, "tests.support.toy_plugin:LOST", "lost")
    with pytest.raises(ValueError, match="metric 'lost'.*angle 'XYZ'.*no prompt would reach it"):
        registry.metrics_for_angle("LI")


def test_metric_registered_under_another_name_is_refused(monkeypatch):
    _toy_tables(monkeypatch, name="LI")
    with pytest.raises(ValueError, match="registered as 'LI'.*declares name 'brightness'"):
        registry.metrics_for_angle("LI")


@pytest.mark.parametrize("part", ["aggregate", "headline", "demo_reply", "scores", "systems"])
def test_half_declared_protocol_fails_at_import(part):
    """Every part of a protocol is one field of its declaration; leaving one out cannot pass construction."""
    import dataclasses

    wise = registry.protocol("wise-verified")
    with pytest.raises(TypeError, match=f"protocol 'wise-verified' declares no {part}"):
        dataclasses.replace(wise, **{part: {} if part == "scores" else () if part == "systems" else None})


def test_protocol_stage_and_metrics_come_from_its_declaration():
    for name in registry.PROTOCOLS:
        proto = registry.protocol(name)
        stage = registry.feature_stage(f"judge.{name}")
        assert stage.name == f"judge.{name}" and stage.version == proto.version
        for mname in proto.metrics:
            m = registry.metric(mname)
            assert m.features == (stage.name,) and m.version == (proto.metric_version or proto.version)
        assert set(proto.metrics) <= set(registry.metric_names())


def test_protocol_prompts_route_to_the_metrics_each_protocol_declares():
    for name in registry.PROTOCOLS:
        proto = registry.protocol(name)
        prompt = Prompt(role="GD", angle="TR", core="x", controls={"protocol": name})
        assert registry.metrics_for_prompt(prompt) == list(proto.metrics)
        assert all(registry.metric(m).angle == name for m in proto.metrics)
    unknown = Prompt(role="GD", angle="TR", core="x", controls={"protocol": "no-such-benchmark"})
    assert registry.metrics_for_prompt(unknown) == registry.metrics_for_angle("TR")


def test_every_ontology_angle_with_a_shipped_metric_is_routed():
    from vistar.ontology import Ontology

    routes = registry.check()
    for angle in Ontology.load().angles:
        assert routes.get(angle), f"no shipped metric declares angle {angle}"


def test_toy_protocol_is_one_module_end_to_end(tmp_path, monkeypatch):
    """The documented steps for a protocol: its module and its line in `registry.PROTOCOLS`; then `vistar score
    --suite` imports its items, asks the local demo judge, scores, summarises and prints its headline."""
    import json

    from typer.testing import CliRunner

    from tests.support.toy_protocol import write_benchmark
    from tests.support.vlm_helpers import RED, solid
    from vistar.cli import app
    from vistar.vlm.testing_server import JudgeServer

    monkeypatch.setitem(registry.PROTOCOLS, "toy-colours", "tests.support.toy_protocol:PROTOCOL")
    # red images: item 1 asks for red (yes -> 1), item 2 for blue (no -> 0)
    data, images = write_benchmark(tmp_path, {"1": "red", "2": "blue"}, solid(RED))
    with JudgeServer() as server:
        result = CliRunner().invoke(app, ["score", str(images), "--suite", "toy-colours", "--data-dir",
                                          str(data), "--out", str(tmp_path / "run"), "--judge-url", server.url,
                                          "--judge-model", "t"], env={"VISTAR_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, result.output
    rows = read_scores(tmp_path / "run").set_index("prompt_id")
    assert list(rows.metric) == ["toy.match", "toy.match"] and set(rows.status) == {"ok"}
    assert rows.loc["1", "score"] == 1.0 and rows.loc["2", "score"] == 0.0
    summary = json.loads((tmp_path / "run" / "summary-toy-colours.json").read_text())
    assert summary["m"]["match"] == 0.5
    assert 'toy-colours m: {"match": 0.5}' in result.output
