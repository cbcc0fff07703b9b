"""`vistar bench --random-init` end to end on a machine without the YOLO checkpoint: the instances stage runs
the full-size YOLOv8l-seg with random weights (at a reduced input size to stay cheap), the output says so, and the
timed `vistar score` run scores with the same random-initialised models."""
import json

import pytest
from typer.testing import CliRunner

from vistar.cli import app
from vistar.models import provenance

pytestmark = pytest.mark.slow


def test_bench_random_init_runs_full_size_yolo(tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))   # no weights anywhere
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(provenance, "_LOADED", {})
    prompts, onto, report = tmp_path / "p.vistar", tmp_path / "onto.yaml", tmp_path / "bench.json"
    prompts.write_text("p1: [PH|LI] three wooden blocks on a floor, low light from the left\n")
    onto.write_text("features:\n  instances:\n    imgsz: 64\n")
    args = ["bench", "--prompts", str(prompts), "--n", "1", "--size", "64", "--batch-sizes", "1", "--repeats", "1",
            "--ontology", str(onto), "--json", str(report)]

    without = CliRunner().invoke(app, args, terminal_width=200)
    assert without.exit_code == 0, without.output
    skipped = {s["name"]: s for s in json.loads(report.read_text())["stages"]}["instances"]
    assert skipped["status"] == "skipped" and "missing model weight 'yolov8l-seg'" in skipped["note"]
    assert "random-initialised" not in without.output and json.loads(report.read_text())["naive_vs_engine"] is None

    result = CliRunner().invoke(app, [*args, "--random-init"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "random_init: instances ran on random-initialised yolov8l-seg" in result.output
    data = json.loads(report.read_text())
    stages = {s["name"]: s for s in data["stages"]}
    assert stages["instances"]["status"] == "ok" and stages["instances"]["random_init"] == ["yolov8l-seg"]
    assert stages["shadows"]["random_init"] == []            # classical stage, no weights involved
    assert data["fingerprint"]["random_init_models"] == {"instances": ["yolov8l-seg"]}
    assert data["fingerprint"]["models"]["yolov8l-seg"] == {"path": None, "sha256": None, "random_init": True, "seed": 0,
                                                            "builder": "ultralytics"}
    # full-size FLOPs: Ultralytics publishes 220.5 GFLOPs at 640 px; at 64 px that is 1/100 of it
    assert abs(stages["instances"]["flops_per_image"] / 2.205e9 - 1) < 0.1
    assert {m["metric"]: m["status"] for m in data["metrics"]} == {"LI": "ok"}
    # the timed `run_score` ran on the same random-initialised models (its own `random_init` option stays refused):
    # one row, which LI itself skips because random weights find no salient object
    assert data["naive_vs_engine"]["rows"] == {"skipped": 1} and data["naive_vs_engine"]["engine_end_to_end_s"] > 0
