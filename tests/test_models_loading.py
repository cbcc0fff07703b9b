"""Real loading paths with tiny random-initialised models (nothing downloaded), and missing weights -> skipped rows."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("ultralytics")

from tests.support.tiny_checkpoints import save_tiny_dpt, save_tiny_yolo_seg  # noqa: E402
from vistar.api import (  # noqa: E402
    Instances,  # noqa: E402
    StageContext,
    StageInput,
)
from vistar.engine.registry import feature_stage  # noqa: E402
from vistar.engine.runner import ScoreConfig, run_score  # noqa: E402
from vistar.engine.store import read_scores  # noqa: E402
from vistar.features.depth import DptDepth  # noqa: E402
from vistar.features.instances import UltralyticsSegDetector  # noqa: E402
from vistar.prompts_dsl import parse_prompt  # noqa: E402
from vistar.synth.scenes import scene_pair  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _deterministic_algorithms():
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(previous)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {"dpt-hybrid-midas": str(save_tiny_dpt(root / "dpt")), "yolov8l-seg": str(save_tiny_yolo_seg(root / "yolo"))}


def _inputs(images):
    prompt = parse_prompt("[PH|PSC] a blue ball on a red box")
    return [StageInput(im, prompt, {}) for im in images]


@pytest.mark.slow
def test_depth_stage_loads_tiny_dpt_and_returns_maps_at_image_resolution(tiny):
    ctx = StageContext(model_paths=tiny, features={"depth": {"batch_size": 2}})
    images = [scene_pair(0, 40, 56)[0].image, scene_pair(1, 30, 30)[1].image, scene_pair(2, 40, 56)[0].image]
    out = feature_stage("depth").compute(_inputs(images), ctx)
    assert [o.shape for o in out] == [(40, 56), (30, 30), (40, 56)] and all(o.dtype == np.float32 for o in out)
    assert all(np.isfinite(o).all() for o in out)
    # batch size does not change the result, bit for bit: on CPU the forward sees one image at a time
    # (runtime.device.batch_invariant), whatever `batch_size` groups
    seen = _forward_batch_sizes(_cached(ctx, DptDepth).model)
    again_2 = feature_stage("depth").compute(_inputs(images), ctx)
    assert seen == [1, 1, 1]
    ctx1 = StageContext(model_paths=tiny, features={"depth": {"batch_size": 1}})
    again = feature_stage("depth").compute(_inputs(images), ctx1)
    for a, b, c in zip(out, again, again_2):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_instances_stage_loads_tiny_yolo_seg(tiny):
    ctx = StageContext(model_paths=tiny, features={"instances": {"imgsz": 128, "conf": 0.0, "max_det": 5}})
    images = [scene_pair(3, 48, 64)[0].image, scene_pair(4, 40, 40)[0].image]
    out = feature_stage("instances").compute(_inputs(images), ctx)
    assert len(out) == 2 and all(isinstance(o, Instances) for o in out)
    for inst, im in zip(out, images):
        assert inst.masks.shape[1:] == im.shape[:2] and inst.masks.dtype == bool
        assert 0 < len(inst) <= 5                       # conf 0: a random model still proposes boxes
        assert np.all(np.diff(inst.confidences) <= 0)   # ordered by confidence
        assert inst.boxes.shape == (len(inst), 4) and set(inst.class_names) <= {"0", "1", "2"}
    # batch composition does not change detections, bit for bit: on CPU each image is its own forward
    (network,) = _cached(ctx, UltralyticsSegDetector).modules()
    seen = _forward_batch_sizes(network)
    pair = feature_stage("instances").compute(_inputs([images[0], images[0]]), ctx)
    alone = feature_stage("instances").compute(_inputs([images[0]]), ctx)
    assert seen == [1, 1, 1]
    for other in (pair[0], pair[1], alone[0]):
        np.testing.assert_array_equal(other.confidences, out[0].confidences)
        np.testing.assert_array_equal(other.boxes, out[0].boxes)
        np.testing.assert_array_equal(other.masks, out[0].masks)


def _cached(ctx, kind):
    (model,) = [m for m in ctx.cache.values() if isinstance(m, kind)]
    return model


def _forward_batch_sizes(module) -> list[int]:
    """A spy on MODULE's forward: the batch size of every call from now on."""
    seen: list[int] = []

    def record(_module, args, kwargs):
        seen.append(len(args[0] if args else next(iter(kwargs.values()))))

    module.register_forward_pre_hook(record, with_kwargs=True)
    return seen


def _run(tmp_path, model_paths, prompt_line="p1: [PH|PSC] a blue ball sitting on a red box"):
    images = tmp_path / "images" / "m"
    images.mkdir(parents=True)
    Image.fromarray(scene_pair(0, 48, 64)[0].image).save(images / "p1.png")
    prompts = tmp_path / "prompts.vistar"
    prompts.write_text(prompt_line + "\n")
    onto = tmp_path / "onto.yaml"
    onto.write_text("features:\n  instances: {imgsz: 64, conf: 0.0, max_det: 5}\n")
    out = tmp_path / "run"
    run_score(ScoreConfig(images=tmp_path / "images", prompts=prompts, out=out, ontology=onto, model_paths=model_paths))
    return read_scores(out), out


def test_missing_weights_give_skipped_rows_naming_weight_and_command(tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hf"))
    scores, _ = _run(tmp_path, {})
    row = scores[scores.metric == "PSC"].iloc[0]
    assert row.status == "skipped" and pd.isna(row.score)
    assert "missing model weight" in row.error and "vistar models fetch" in row.error
    assert ("dpt-hybrid-midas" in row.error) or ("yolov8l-seg" in row.error)


def test_psc_end_to_end_with_tiny_models_records_provenance(tmp_path, tiny):
    scores, out = _run(tmp_path, tiny)
    row = scores[scores.metric == "PSC"].iloc[0]
    assert row.status == "ok" and 0.0 <= row.score <= 1.0, row.error
    models = json.loads((out / "run.json").read_text())["models"]
    assert {"dpt-hybrid-midas", "yolov8l-seg"} <= set(models) and all(len(m["sha256"]) == 64 for m in models.values())


def test_gc_end_to_end_with_tiny_depth_model_reports_every_cue(tmp_path, tiny):
    scores, _ = _run(tmp_path, tiny, "p1: [GA|GC] a stone archway over a path")
    row = scores[scores.metric == "GC"].iloc[0]
    assert row.status == "ok", row.error
    details = json.loads(row.details)
    assert set(details["cues"]) == {"normals", "curvature", "highlights", "contours", "texture", "copies", "stretch"}  # no PaDiM stats set
    assert row.score == pytest.approx(min(c["score"] for c in details["cues"].values()))
