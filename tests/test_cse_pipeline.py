"""CSE end to end through `run_score`: tiny random-init CLIP / DINOv2 / GroundingDINO / SAM checkpoints
saved with `save_pretrained` and loaded through the model layer (`--model-path NAME=DIR`), on generated
storyboards whose panel boxes are known; plus the skip path when a weight is missing."""
import json
import math

import numpy as np
import pytest

pytest.importorskip("transformers", reason="the CSE stages need the `cv` extra (transformers)")

from PIL import Image  # noqa: E402

from vistar.engine.runner import ScoreConfig, run_score  # noqa: E402
from vistar.engine.store import read_scores  # noqa: E402
from vistar.kernels.cosine import cosine_matrix  # noqa: E402
from vistar.synth.storyboards import make_storyboard  # noqa: E402
from vistar.synth.tiny_models import save_tiny_cse_models  # noqa: E402

PROMPTS = """\
fox: [SA|CSE] Storyboard of a red fox: the fox wakes up in the den; the fox hunts in the snow; the fox sleeps under a tree; the fox jumps {subject="red fox", grid="2x2"}
ball: [ED|CSE] Two panels of a red ball {shots=["a red ball on a tree", "a red ball in the snow"], subject="red ball", panels=2}
bad: [SA|CSE] Storyboard of a fox: wakes; sleeps {subject="fox", grid="two by two"}
"""
# Random-init models: detection thresholds at 0 (their scores are meaningless, so every query counts),
# and coverage mapped over the whole cosine range (tiny CLIP's cosines sit near 0).
ONTOLOGY = ("features:\n  subject_masks: {box_threshold: 0.0, text_threshold: 0.0}\n"
            "metrics:\n  CSE:\n    params: {cov_lo: -1.0, cov_hi: 1.0}\n")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("cse")
    weights = save_tiny_cse_models(root / "weights")
    boards = {"gen-a/fox.png": make_storyboard(2, 2, 240, 320, seed=1, subject=True),
              "gen-a/ball.png": make_storyboard(1, 2, 160, 320, seed=2, subject=True),
              "gen-b/fox.png": make_storyboard(2, 2, 256, 256, seed=3, subject=True, gutter_colour=(0, 0, 0)),
              "gen-b/bad.png": make_storyboard(2, 2, 128, 128, seed=4)}
    for rel, board in boards.items():
        (root / "images" / rel).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(board.image).save(root / "images" / rel)
    (root / "prompts.vistar").write_text(PROMPTS)
    (root / "onto.yaml").write_text(ONTOLOGY)
    return root, weights, boards


def _run(root, weights, out, batch_size, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(root / "empty-home"))      # no stray weights from the user's cache
    monkeypatch.setenv("HF_HUB_CACHE", str(root / "empty-hf"))
    cfg = ScoreConfig(images=root / "images", prompts=root / "prompts.vistar", out=root / out, batch_size=batch_size,
                      ontology=root / "onto.yaml", model_paths=weights)
    run_score(cfg)
    return read_scores(root / out).sort_values("image").reset_index(drop=True)


@pytest.mark.slow
def test_pipeline_scores_every_storyboard(setup, monkeypatch):
    root, weights, boards = setup
    df = _run(root, weights, "run-b3", 3, monkeypatch)
    assert list(df.image) == sorted(boards)
    bad = df[df.image == "gen-b/bad.png"].iloc[0]                     # a bad control costs its own row only
    assert bad.status == "error" and "control 'grid'" in bad.error and "two by two" in bad.error
    df = df[df.image != "gen-b/bad.png"]
    assert set(df.status) == {"ok"}, df[["image", "status", "error"]]
    for row in df.itertuples():
        d = json.loads(row.details)
        board = boards[row.image]
        assert d["panels"] == len(board.boxes) and d["panel_method"] == "detected"
        assert np.abs(np.array([p["box"] for p in d["per_panel"]]) - board.boxes).max() <= 2
        assert row.score > 0 and row.score == pytest.approx(math.sqrt(d["cov"] * d["con"]), abs=1e-9)
        assert {p["mask"] for p in d["per_panel"] if p["subject"]} <= {"sam", "box"}
        assert d["subject_panels"] == [p["panel"] for p in d["per_panel"] if p["subject"]]
        assert len(d["similarity"]) == d["panels"] and len(d["similarity"][0]) == len(d["per_shot"])
    fox = json.loads(df.loc[df.image == "gen-a/fox.png", "details"].item())
    assert [s["text"] for s in fox["per_shot"]][:2] == ["the fox wakes up in the den", "the fox hunts in the snow"]
    models = json.loads((root / "run-b3" / "run.json").read_text())["models"]
    assert {"clip-vit-large-patch14", "dinov2-large", "grounding-dino-tiny", "sam-vit-huge"} <= set(models)
    assert all(len(models[m]["sha256"]) == 64 for m in ("clip-vit-large-patch14", "sam-vit-huge"))


def test_batched_coverage_equals_one_panel_at_a_time(setup, monkeypatch):
    """The stage embeds all panels of a batch in one forward; a per-panel reference must agree."""
    import torch
    from transformers import CLIPModel, CLIPProcessor

    root, weights, boards = setup
    df = _run(root, weights, "run-b3", 3, monkeypatch)                # reuses the finished run
    details = json.loads(df.loc[df.image == "gen-a/ball.png", "details"].item())
    model = CLIPModel.from_pretrained(weights["clip-vit-large-patch14"]).eval()
    processor = CLIPProcessor.from_pretrained(weights["clip-vit-large-patch14"])
    board = boards["gen-a/ball.png"]
    shots = ["a red ball on a tree", "a red ball in the snow"]
    with torch.no_grad():
        panels = [model.get_image_features(**processor(images=board.image[y0:y1, x0:x1], return_tensors="pt")).pooler_output[0].numpy()
                  for x0, y0, x1, y1 in board.boxes]
        texts = [model.get_text_features(**processor(text=[s], return_tensors="pt")).pooler_output[0].numpy() for s in shots]
    sim = cosine_matrix(np.array(panels), np.array(texts))
    np.testing.assert_allclose(details["similarity"], sim, atol=2e-4)
    expected_cov = ((sim.max(axis=0) + 1) / 2).mean()                 # cov_lo −1, cov_hi 1 (see ONTOLOGY)
    assert details["cov"] == pytest.approx(expected_cov, abs=1e-4)


@pytest.mark.slow
def test_scores_do_not_depend_on_batch_size(setup, monkeypatch):
    root, weights, _ = setup
    a = _run(root, weights, "run-b3", 3, monkeypatch)
    b = _run(root, weights, "run-b1", 1, monkeypatch)
    np.testing.assert_allclose(a.score.to_numpy(float), b.score.to_numpy(float), atol=1e-6)
    assert list(a.status) == list(b.status) and list(a.error) == list(b.error)
    assert [json.loads(x).get("subject_panels") for x in a.details] == [json.loads(x).get("subject_panels") for x in b.details]


def test_missing_weight_skips_with_a_clear_reason(setup, monkeypatch):
    root, weights, _ = setup
    partial = {k: v for k, v in weights.items() if k != "sam-vit-huge"}
    df = _run(root, partial, "run-missing", 3, monkeypatch)
    ok_controls = df[df.image != "gen-b/bad.png"]
    assert set(ok_controls.status) == {"skipped"}
    assert all("sam-vit-huge" in e and "vistar models fetch sam-vit-huge" in e for e in ok_controls.error)
