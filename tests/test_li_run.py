"""LI through `vistar score`: the light comes from the core's anchor phrase, and without detector weights
the row is a `skipped` that names the missing weight — the run finishes."""
from PIL import Image

from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores
from vistar.synth.lighting import sample_scene


def test_li_rows_without_detector_weights_are_skipped_with_the_fetch_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "empty-home"))
    images = tmp_path / "images" / "m"
    images.mkdir(parents=True)
    Image.fromarray(sample_scene([-0.94, 0.34, 0.0], seed=3).image).save(images / "p1.png")
    prompts = tmp_path / "prompts.vistar"
    prompts.write_text("p1: [PH|LI] three wooden blocks on a floor, low light from the left\n")
    run_score(ScoreConfig(images=tmp_path / "images", prompts=prompts, out=tmp_path / "run"))
    row = read_scores(tmp_path / "run").iloc[0]
    assert row["metric"] == "LI" and row["status"] == "skipped"
    assert "yolov8l-seg" in row["error"] and "vistar models fetch" in row["error"]
