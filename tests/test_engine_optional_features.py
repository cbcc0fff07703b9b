"""Optional features: used when computable, left out (not skipping the metric) when their weights are missing."""
import json

import numpy as np
from PIL import Image

from vistar.engine import registry
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores


def test_optional_feature_missing_weight_does_not_skip_the_metric(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "FEATURES", {"fake_brightness": "tests.support.fake_plugins:STAGE",
                                               "fake_brightness2": "tests.support.fake_plugins:STAGE2",
                                               "fake_missing": "tests.support.fake_plugins:MISSING_STAGE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.support.fake_plugins:METRIC_OPTIONAL"})
    (tmp_path / "img" / "m").mkdir(parents=True)
    Image.fromarray(np.full((16, 16, 3), 128, np.uint8)).save(tmp_path / "img" / "m" / "p1.png")
    (tmp_path / "p.vistar").write_text('p1: [GD|TR] a sign {text="HI"}\n')
    run_score(ScoreConfig(images=tmp_path / "img", prompts=tmp_path / "p.vistar", out=tmp_path / "run"))
    (row,) = read_scores(tmp_path / "run").to_dict("records")
    assert row["status"] == "ok"
    assert json.loads(row["details"])["given"] == ["fake_brightness", "fake_brightness2"]


def test_a_mixed_batch_runs_each_stage_only_on_images_that_need_it(tmp_path, monkeypatch):
    from tests.support import fake_plugins

    monkeypatch.setattr(registry, "FEATURES", {"fake_brightness": "tests.support.fake_plugins:STAGE",
                                               "fake_brightness2": "tests.support.fake_plugins:STAGE2",
                                               "fake_missing": "tests.support.fake_plugins:MISSING_STAGE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.support.fake_plugins:METRIC_A",
                                              "LI": "tests.support.fake_plugins:METRIC_LI_MISSING"})
    fake_plugins.CALLS.clear()
    (tmp_path / "img" / "m").mkdir(parents=True)
    for pid in ("t1", "t2", "l1"):
        Image.fromarray(np.full((16, 16, 3), 128, np.uint8)).save(tmp_path / "img" / "m" / f"{pid}.png")
    (tmp_path / "p.vistar").write_text('t1: [GD|TR] a {text="A"}\nt2: [GD|TR] b {text="B"}\n'
                                       'l1: [PH|LI] a lamp {light="upper-left front"}\n')
    run_score(ScoreConfig(images=tmp_path / "img", prompts=tmp_path / "p.vistar", out=tmp_path / "run", batch_size=3))
    rows = read_scores(tmp_path / "run").set_index("prompt_id")
    assert fake_plugins.CALLS == [2]  # the brightness stage saw only the two TR images
    assert rows.loc["l1", "status"] == "skipped" and rows.loc["t1", "status"] == "ok"
