"""The CSE stages directly, with tiny random-init checkpoints: SAM's image encoder and GroundingDINO run
once per storyboard image (not per panel), masks stay inside their panel, embeddings line up with panels."""
import numpy as np
import pytest

pytest.importorskip("transformers", reason="the CSE stages need the `cv` extra (transformers)")

from vistar.api import StageContext, StageInput  # noqa: E402
from vistar.features import clip_embed, dino_embed, panels, subject_masks  # noqa: E402
from vistar.models import MissingWeightError  # noqa: E402
from vistar.prompts_dsl import parse_prompt  # noqa: E402
from vistar.synth.storyboards import make_storyboard  # noqa: E402
from vistar.synth.tiny_models import save_tiny_cse_models  # noqa: E402


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return save_tiny_cse_models(tmp_path_factory.mktemp("cse-stages"))


def _inputs(boards, controls):
    prompt = parse_prompt("[SA|CSE] storyboard")
    return [StageInput(b.image, prompt, controls) for b in boards]


def _run(stage, items, ctx, deps):
    for item, dep in zip(items, deps):
        item.deps = dep
    return stage.STAGE.compute(items, ctx)


@pytest.mark.slow
def test_detection_and_sam_encoding_run_once_per_image(weights, monkeypatch):
    from transformers import GroundingDinoForObjectDetection, SamModel

    encoded, detected = [], []
    sam_encode, detect = SamModel.get_image_embeddings, GroundingDinoForObjectDetection.forward
    monkeypatch.setattr(SamModel, "get_image_embeddings",
                        lambda self, pixel_values, *a, **k: encoded.append(len(pixel_values)) or sam_encode(self, pixel_values, *a, **k))
    monkeypatch.setattr(GroundingDinoForObjectDetection, "forward",
                        lambda self, *a, **k: detected.append(len(k["pixel_values"])) or detect(self, *a, **k))
    boards = [make_storyboard(2, 3, 180, 270, seed=s, subject=True) for s in range(2)]
    controls = {"grid": "2x3", "subject": "red fox", "shots": ["a", "b", "c", "d", "e", "f"]}
    ctx = StageContext(model_paths=weights, features={"subject_masks": {"box_threshold": 0.0, "text_threshold": 0.0}})
    items = _inputs(boards, controls)
    layouts = panels.STAGE.compute(items, ctx)
    masks = _run(subject_masks, _inputs(boards, controls), ctx, [{"panels": lay} for lay in layouts])
    assert sum(detected) == 2 and sum(encoded) == 2                     # 2 images, 12 panels
    for board, lay, m in zip(boards, layouts, masks):
        assert m.masks.shape == (6, 180, 270) and m.found.any()
        for k, (x0, y0, x1, y1) in enumerate(lay.boxes):
            outside = m.masks[k].copy()
            outside[y0:y1, x0:x1] = False
            assert not outside.any()                                     # a mask never leaves its panel
            assert m.found[k] == m.masks[k].any() and (m.mask_source[k] != "") == m.found[k]
            if m.found[k]:
                bx0, by0, bx1, by1 = m.boxes[k]
                assert x0 <= bx0 <= bx1 <= x1 and y0 <= by0 <= by1 <= y1
    embeds = _run(dino_embed, _inputs(boards, controls), ctx, [{"subject_masks": m} for m in masks])
    for e, m in zip(embeds, masks):
        np.testing.assert_array_equal(e.found, m.found)
        assert np.all(np.linalg.norm(e.vectors[m.found], axis=1) > 0) and not e.vectors[~m.found].any()
    clips = _run(clip_embed, _inputs(boards, controls), ctx, [{"panels": lay} for lay in layouts])
    assert clips[0].panel_vectors.shape == (6, 16) and clips[0].text_vectors.shape == (6, 16)
    np.testing.assert_allclose(clips[0].text_vectors, clips[1].text_vectors, atol=1e-6)   # same shots, same text


@pytest.mark.slow
def test_missing_subject_or_shots_fail_that_item_only(weights):
    board = make_storyboard(1, 2, 100, 200, seed=0)
    ctx = StageContext(model_paths=weights)
    layout = panels.STAGE.compute(_inputs([board], {"panels": 2}), ctx)[0]
    out = _run(subject_masks, _inputs([board, board], {"panels": 2}), ctx, [{"panels": layout}] * 2)
    assert all(isinstance(o, ValueError) and "subject" in str(o) for o in out)
    out = _run(clip_embed, _inputs([board], {"panels": 2}), ctx, [{"panels": layout}])
    assert isinstance(out[0], ValueError) and "shots" in str(out[0])


def test_missing_weight_raises_the_model_layer_error(tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    board = make_storyboard(1, 2, 100, 200, seed=0)
    ctx = StageContext()
    layout = panels.STAGE.compute(_inputs([board], {"panels": 2}), ctx)[0]
    with pytest.raises(MissingWeightError, match="clip-vit-large-patch14"):
        _run(clip_embed, _inputs([board], {"panels": 2, "shots": ["a", "b"]}), ctx, [{"panels": layout}])


@pytest.mark.slow
def test_cpu_masks_do_not_depend_on_the_batch_size(weights):
    """oneDNN picks its summation order from the batch, and GroundingDINO pads the text to the batch's longest
    query: on the CPU both models therefore see one image per call, and every batch size gives the same bits."""
    boards = [make_storyboard(2, 2, 160, 240, seed=s, subject=True) for s in range(4)]
    subjects = ["red fox", "a small grey cat sitting", "fox", "blue bicycle with a basket"]
    results = {}
    for size in (1, 3, 8):
        ctx = StageContext(model_paths=weights, features={"subject_masks": {"box_threshold": 0.0, "text_threshold": 0.0,
                                                                            "batch_size": size}})
        items = [StageInput(b.image, parse_prompt("[SA|CSE] storyboard"), {"grid": "2x2", "subject": subj})
                 for b, subj in zip(boards, subjects)]
        layouts = panels.STAGE.compute(items, ctx)
        results[size] = _run(subject_masks, items, ctx, [{"panels": lay} for lay in layouts])
    for size in (3, 8):
        for a, b in zip(results[1], results[size]):
            np.testing.assert_array_equal(a.boxes, b.boxes)
            np.testing.assert_array_equal(a.masks, b.masks)
            np.testing.assert_array_equal(a.found, b.found)
