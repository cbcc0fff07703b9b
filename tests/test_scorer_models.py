"""`vistar.Scorer` keeps its models: a second call loads nothing (counted where every load is recorded, the model
layer's provenance record, and where every stage asks for its model, `StageContext.model`); and a tensor given to a
run on its device reaches the torch stages without a round trip through the host."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.support.tiny_checkpoints import save_tiny_dpt  # noqa: E402
from vistar import Scorer  # noqa: E402
from vistar.api.stage import StageContext  # noqa: E402
from vistar.models import provenance  # noqa: E402
from vistar.runtime import device as engine_device  # noqa: E402
from vistar.scoring.sources import image_sources  # noqa: E402
from vistar.synth.scenes import scene_pair  # noqa: E402
from vistar.synth.text import render_text  # noqa: E402

PROMPTS = ['t: [GD|TR] A poster that says "GRAND OPENING"', "c: [MS|CPA] an astronaut {count=1}",
           "g: [GA|GC] a stone archway over a path"]


class _Counting(dict):
    """The provenance record, counting every entry written (a model loaded and recorded)."""

    writes = 0

    def __setitem__(self, key, value):
        type(self).writes += 1
        super().__setitem__(key, value)


@pytest.fixture(scope="module")
def dpt(tmp_path_factory):
    return str(save_tiny_dpt(tmp_path_factory.mktemp("dpt")))


def _images(k: int) -> list[np.ndarray]:
    from skimage import data

    person = np.asarray(Image.fromarray(data.astronaut()).resize((192, 192)))
    return [np.asarray(render_text("GRAND OPENING", size=192, font_size=20 + 2 * k)), person if k == 0 else person[:, ::-1],
            scene_pair(k, 48, 64)[k % 2].image]


@pytest.mark.slow
def test_a_second_call_loads_nothing(dpt, monkeypatch):
    monkeypatch.setattr(provenance, "_LOADED", _Counting())
    loads: list[str] = []
    original = StageContext.model

    def counted(self, key, loader):
        def load():
            model = loader()   # a missing weight raises here: asked again next call, never loaded
            loads.append(key)
            return model

        return original(self, key, load)

    monkeypatch.setattr(StageContext, "model", counted)
    scorer = Scorer(angles=["TR", "CPA", "GC"], model_paths={"dpt-hybrid-midas": dpt, "ssd-mobilenet-v2-coco": "/nonexistent/w",
                                                             "fer-mini-xception": "/nonexistent/w"})
    first = scorer.score(_images(0), PROMPTS)
    assert {r.metric: r.status for r in first} == {"TR": "ok", "CPA": "ok", "GC": "ok"}, [r.error for r in first]
    loaded, recorded = list(loads), _Counting.writes
    assert {"depth:dpt-hybrid-midas", "faces:detector", "pose"} <= set(loaded)
    assert any(k.startswith("ocr:") for k in loaded) and recorded >= 4   # OCR det + rec, MediaPipe face + pose, DPT
    second = scorer.score(_images(1), PROMPTS)
    assert all(r.status == "ok" for r in second)
    assert loads[len(loaded):] == []
    assert _Counting.writes == recorded


def test_a_tensor_reaches_the_torch_stage_without_a_host_copy(dpt, monkeypatch):
    image = torch.from_numpy(scene_pair(0, 48, 64)[0].image.copy()).permute(2, 0, 1)
    (source,) = image_sources(image)
    assert engine_device.pixels_to_device(source.pixels, "cpu") is source.pixels.device_pixels
    assert source.pixels.device_pixels.data_ptr() == source.pixels.ctypes.data   # the host view is the same memory on CPU

    def no_host_copy(tensor, device):
        raise AssertionError("pixels copied from the host to the device")

    monkeypatch.setattr(engine_device, "to_device", no_host_copy)
    scorer = Scorer(angles=["GC"], model_paths={"dpt-hybrid-midas": dpt})
    from_tensor = scorer.score(image.float()[None] / 255.0, PROMPTS[2])
    assert [r.status for r in from_tensor] == ["ok"], [r.error for r in from_tensor]
    from_array = scorer.score(np.ascontiguousarray(image.permute(1, 2, 0).numpy()), PROMPTS[2])   # the control: host pixels
    assert from_array[0].status == "error" and "pixels copied from the host" in from_array[0].error
