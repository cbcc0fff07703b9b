"""`subject_masks` on a batch of storyboards: one SAM image-encoder call and one prompt-decoder call for the batch on
CUDA (the same code run here on CPU tensors with the CUDA branch taken), rows equal to the one-image-at-a-time path;
masks upsampled only over their panel, bit for bit SAM's processor's `post_process_masks`; SDPA attention."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from vistar.api import StageContext, StageInput  # noqa: E402
from vistar.features import panels, subject_masks  # noqa: E402
from vistar.features.hf_models import load_pretrained  # noqa: E402
from vistar.features.subject_masks import _panel_mask, _panel_masks  # noqa: E402
from vistar.prompts_dsl import parse_prompt  # noqa: E402
from vistar.synth.storyboards import make_storyboard  # noqa: E402
from vistar.synth.tiny_models import save_tiny_cse_models  # noqa: E402


@pytest.mark.parametrize("shape, resized", [((1024, 1024), (1024, 1024)), ((768, 1024), (768, 1024)),
                                            ((600, 900), (683, 1024)), ((2048, 1536), (1024, 768))])
def test_panel_masks_are_the_processors_masks_inside_the_panel(shape, resized):
    """Random logits (values around the threshold everywhere), boxes on and off the 4-pixel grid, at the borders."""
    from transformers import SamImageProcessor

    ip = SamImageProcessor()
    logits = torch.randn(1, 1, 256, 256, generator=torch.Generator().manual_seed(0)) * 3
    [reference] = ip.post_process_masks([logits], [shape], [resized])
    h, w = shape
    boxes = [(0, 0, w // 2, h // 2), (w // 2, h // 2, w, h), (13, 7, w - 5, h // 3 + 1), (w - 3, h - 2, w, h),
             (0, 0, w, h), (401, 0, 402, h)]
    for x0, y0, x1, y1 in boxes:
        ours = _panel_mask(logits, (x0, y0, x1, y1), shape, resized, (1024, 1024))
        assert torch.equal(ours, reference[0, 0, y0:y1, x0:x1]), (x0, y0, x1, y1)
        full = torch.zeros(shape, dtype=torch.bool)   # written in place into the image's masks, nothing around it
        written = _panel_mask(logits, (x0, y0, x1, y1), shape, resized, (1024, 1024), out=full[y0:y1, x0:x1])
        assert written.data_ptr() == full[y0:y1, x0:x1].data_ptr() and torch.equal(written, ours)
        assert full.sum() == ours.sum()


def test_a_found_panel_whose_sam_mask_is_empty_falls_back_on_its_box():
    # four panels of a 2x2 storyboard, 200x300: panel 0 not found; SAM's logits negative everywhere for panel 1
    # (box fallback), positive for panel 3; panel 2's box thinner than a pixel (nothing to show)
    panel_boxes = [(0, 0, 150, 100), (150, 0, 300, 100), (0, 100, 150, 200), (150, 100, 300, 200)]
    best = np.array([-1, 0, 0, 0])
    clipped = np.array([[0, 0, 0, 0], [160, 10, 200, 60], [20, 120, 20.2, 180], [170, 120, 280, 190]], float)
    logits = torch.cat([torch.full((1, 1, 256, 256), -5.0), torch.full((1, 1, 256, 256), -5.0),
                        torch.full((1, 1, 256, 256), 5.0)])
    masks, sources = _panel_masks((logits, (683, 1024)), best, clipped, panel_boxes, (200, 300), (1024, 1024), "cpu")
    assert sources == ["", "box", "", "sam"]
    box = np.zeros((200, 300), bool)
    box[10:60, 160:200] = True
    assert np.array_equal(masks[1], box) and not masks[0].any() and not masks[2].any()
    assert masks[3][100:200, 150:300].all() and not masks[3][:100].any() and not masks[3][:, :150].any()


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return save_tiny_cse_models(tmp_path_factory.mktemp("cse-batched"))


def _items(ctx):
    boards = [make_storyboard(2, 2, 200, 300, seed=s, subject=True) for s in range(3)]
    subjects = ["red fox", "a small grey cat sitting", "fox"]
    items = [StageInput(b.image, parse_prompt("[SA|CSE] storyboard"), {"grid": "2x2", "subject": subj})
             for b, subj in zip(boards, subjects)]
    for item, layout in zip(items, panels.STAGE.compute(items, ctx)):
        item.deps = {"panels": layout}
    return items


@pytest.mark.slow
def test_cuda_batching_one_encoder_and_one_decoder_call_rows_as_one_image_at_a_time(weights, monkeypatch):
    from transformers import SamModel

    features = {"subject_masks": {"box_threshold": 0.0, "text_threshold": 0.0, "batch_size": 8}}
    alone = subject_masks.STAGE.compute(_items(StageContext(model_paths=weights, features=features)),
                                        StageContext(model_paths=weights, features=features))
    encoder, decoder = [], []
    encode, forward = SamModel.get_image_embeddings, SamModel.forward
    monkeypatch.setattr(SamModel, "get_image_embeddings",
                        lambda self, pixel_values, **k: encoder.append(len(pixel_values)) or encode(self, pixel_values, **k))
    monkeypatch.setattr(SamModel, "forward", lambda self, **k: decoder.append(tuple(k["input_boxes"].shape[:2])) or forward(self, **k))
    # the CUDA branches, on this machine's CPU tensors: batches go through whole, as batch_invariant does on CUDA
    monkeypatch.setattr(subject_masks, "is_cuda", lambda device: True)
    monkeypatch.setattr(subject_masks, "batch_invariant", lambda fn, device, **inputs: fn(**inputs))
    ctx = StageContext(model_paths=weights, features=features)
    together = subject_masks.STAGE.compute(_items(ctx), ctx)
    found = [int((m.found).sum()) for m in alone]
    assert sum(found) >= 4
    segmented = sum(1 for n in found if n)
    assert encoder == [segmented] and decoder == [(segmented, max(found))]   # one call each, boxes padded to the most
    for a, b in zip(alone, together):   # a batch moves low bits only (oneDNN's blocking follows the batch size)
        np.testing.assert_array_equal(a.found, b.found)
        np.testing.assert_allclose(a.boxes, b.boxes, atol=1e-3)
        assert a.mask_source == b.mask_source
        assert (a.masks == b.masks).mean() >= 0.999


def test_the_stages_models_run_sdpa_attention_where_the_architecture_has_it(weights):
    """transformers picks torch's scaled-dot-product attention by default where an architecture implements it:
    SAM's, CLIP's and DINOv2's do; GroundingDINO's multi-scale deformable attention has no SDPA form."""
    from transformers import AutoImageProcessor, AutoModel, AutoModelForZeroShotObjectDetection, AutoProcessor, CLIPModel, CLIPProcessor, SamModel, SamProcessor

    ctx = StageContext(model_paths=weights)
    for name, model_cls, processor_cls, attention in [
            ("sam-vit-huge", SamModel, SamProcessor, "sdpa"), ("clip-vit-large-patch14", CLIPModel, CLIPProcessor, "sdpa"),
            ("dinov2-large", AutoModel, AutoImageProcessor, "sdpa"),
            ("grounding-dino-tiny", AutoModelForZeroShotObjectDetection, AutoProcessor, "eager")]:
        model, _ = load_pretrained(name, ctx, model_cls, processor_cls)
        assert model.config._attn_implementation == attention, name
