"""runtime/normalise.py: the per-channel table path against the float arithmetic it replaces, value for value."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cv2")

from vistar.runtime import normalise  # noqa: E402
from vistar.runtime.normalise import normalise_into  # noqa: E402

MEAN, STD = torch.tensor([0.48145466, 0.4578275, 0.40821073]) * 255, torch.tensor([0.26862954, 0.26130258, 0.27577711]) * 255


@pytest.fixture(autouse=True)
def _table_for_every_size(monkeypatch):
    monkeypatch.setattr(normalise, "TABLE_FROM", 0)   # these small images take the table path too


def _imagenet(values):
    return values.sub_(MEAN.view(-1, 1, 1)).div_(STD.view(-1, 1, 1))


def _reference(pixels, arithmetic):
    out = torch.empty(pixels.shape, dtype=torch.float32)
    out.copy_(pixels)
    arithmetic(out)
    return out


@pytest.mark.parametrize("destination", ["planar", "channels last"])   # the crops' batches; SAM's and GroundingDINO's on the CPU
@pytest.mark.parametrize("layout", ["panel view", "channels first", "planar view", "column strided", "whole image"])
def test_table_path_equals_the_float_arithmetic(layout, destination):
    image = np.random.default_rng(0).integers(0, 256, (61, 83, 3), dtype=np.uint8)
    image[0, :3] = [[0, 0, 0], [255, 255, 255], [127, 128, 129]]     # the table's ends and the mean's neighbourhood
    hwc = torch.from_numpy(image)
    pixels = {"panel view": hwc.permute(2, 0, 1)[:, 5:40, 7:70],
              "channels first": hwc.permute(2, 0, 1).contiguous(),   # planar, as torch's uint8 resize returns it
              "planar view": hwc.permute(2, 0, 1).contiguous()[:, 3:50, 2:60],
              "column strided": hwc.permute(2, 0, 1)[:, ::2, ::3],
              "whole image": hwc.permute(2, 0, 1)}[layout]
    padded = torch.full((3, 70, 90), -7.0)
    if destination == "channels last":
        padded = padded[None].contiguous(memory_format=torch.channels_last)[0]
    h, w = pixels.shape[-2:]
    normalise_into(padded[:, :h, :w], pixels, _imagenet)     # a strided destination, as a padded batch's corner
    assert torch.equal(padded[:, :h, :w], _reference(pixels, _imagenet))
    assert (padded[:, h:] == -7).all() and (padded[:, :h, w:] == -7).all()   # nothing written outside


def test_rescale_only_and_one_channel():
    pixels = torch.arange(256, dtype=torch.uint8).reshape(1, 16, 16)
    out = torch.empty((1, 16, 16))
    normalise_into(out, pixels, lambda v: v.mul_(1 / 255))
    assert torch.equal(out, _reference(pixels, lambda v: v.mul_(1 / 255)))
    assert out[0, 0, 0] == 0 and out[0, -1, -1] == 1
