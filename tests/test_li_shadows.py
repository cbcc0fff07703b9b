"""Shadow stage: the classical detector on a rendered scene, and the learned-segmenter path (torch.export)."""
import numpy as np
import pytest
import torch

from vistar.api import Instances, StageContext, StageInput
from vistar.features.shadows import STAGE, segmenter_for
from vistar.features.shadows_classical import ClassicalShadowDetector
from vistar.synth.lighting import sample_scene


def test_classical_detector_recovers_the_exact_cast_shadow():
    scene = sample_scene([-0.6645, 0.342, 0.6645], seed=11)
    mask = ClassicalShadowDetector()(scene.image, scene.instances)
    iou = (mask & scene.shadow).sum() / (mask | scene.shadow).sum()
    assert iou > 0.85
    assert not (mask & scene.instances.masks.any(0)).any()  # an object's dark side is never a cast shadow


def test_uniformly_lit_ground_has_no_shadow():
    rng = np.random.default_rng(0)
    image = np.clip(150 + 6 * rng.standard_normal((120, 160, 3)), 0, 255).astype(np.uint8)
    assert not ClassicalShadowDetector()(image, Instances.empty(120, 160)).any()


class _DarkIsShadow(torch.nn.Module):
    def forward(self, x):
        return 20 * (0.3 - x.mean(1, keepdim=True))


@pytest.mark.slow
def test_learned_segmenter_is_loaded_through_the_model_layer(tmp_path):
    path = tmp_path / "shadow-net.pt2"
    dims = {2: torch.export.Dim("h", min=8, max=4096), 3: torch.export.Dim("w", min=8, max=4096)}
    program = torch.export.export(_DarkIsShadow(), (torch.rand(1, 3, 32, 48),), dynamic_shapes={"x": dims})
    torch.export.save(program, str(path))
    image = np.full((40, 60, 3), 200, np.uint8)
    image[20:30, 10:50] = 20
    obj = np.zeros((1, 40, 60), bool)
    obj[0, 18:32, 40:60] = True
    inst = Instances(obj, np.zeros(1, int), ("box",), np.ones(1), np.array([[40, 18, 60, 32]], float))
    ctx = StageContext(features={"shadows": {"model": "shadow-net"}}, model_paths={"shadow-net": str(path)})
    assert segmenter_for(ctx).name == "shadow-net"
    out = STAGE.compute([StageInput(image, None, {}, {"instances": inst})], ctx)[0]
    expected = np.zeros((40, 60), bool)
    expected[20:30, 10:40] = True
    assert out.source == "shadow-net" and (out.mask == expected).all()


def test_stage_output_does_not_depend_on_the_batch():
    a, b = sample_scene([0.0, 0.342, -0.94], seed=5), sample_scene([0.94, 0.342, 0.0], seed=6)
    ctx = StageContext()
    pair = STAGE.compute([StageInput(s.image, None, {}, {"instances": s.instances}) for s in (a, b)], ctx)
    alone = STAGE.compute([StageInput(b.image, None, {}, {"instances": b.instances})], StageContext())
    assert (pair[1].mask == alone[0].mask).all() and pair[1].mask.any()
