"""`vistar.models.load_model`, the one loading sequence of the stages: a found weight is loaded and recorded with
its sha256; a missing one raises unless the run asked for random-initialised stand-ins, which are recorded as such."""
from __future__ import annotations

import hashlib

import pytest

from vistar.api import RunOptions, StageContext
from vistar.models import MissingWeightError, load_model, loaded_models, random_init
from vistar.models.provenance import clear_loaded


@pytest.fixture(autouse=True)
def fresh_record():
    clear_loaded()
    yield
    clear_loaded()


def test_found_weight_is_loaded_then_recorded_with_its_sha256(tmp_path):
    weight = tmp_path / "w.bin"
    weight.write_bytes(b"weights")
    ctx = StageContext(model_paths={"dpt-hybrid-midas": str(weight)}, options=RunOptions(random_init=True))
    seen = []
    model = load_model("dpt-hybrid-midas", ctx, lambda path: seen.append(path) or "model",
                       lambda m, p: pytest.fail("a found weight is never replaced by a random one"))
    assert model == "model" and seen == [weight]
    assert loaded_models()["dpt-hybrid-midas"] == {"path": str(weight), "sha256": hashlib.sha256(b"weights").hexdigest()}


def test_failed_load_records_nothing(tmp_path):
    weight = tmp_path / "w.bin"
    weight.write_bytes(b"x")
    ctx = StageContext(model_paths={"dpt-hybrid-midas": str(weight)})
    with pytest.raises(RuntimeError):
        load_model("dpt-hybrid-midas", ctx, lambda path: (_ for _ in ()).throw(RuntimeError("corrupt")))
    assert loaded_models() == {}


def test_missing_weight_raises_unless_random_init_was_asked(tmp_path, monkeypatch):
    ctx = StageContext(model_paths={"dpt-hybrid-midas": str(tmp_path / "absent")})
    with pytest.raises(MissingWeightError, match="dpt-hybrid-midas"):
        load_model("dpt-hybrid-midas", ctx, lambda path: pytest.fail("nothing to load"))
    assert loaded_models() == {}

    built = []
    monkeypatch.setattr(random_init, "build_random",
                        lambda name, seed, device, model_scale: built.append((name, seed, model_scale)) or ("M", "P"))
    ctx.options = RunOptions(random_init=True, seed=7)
    assert load_model("dpt-hybrid-midas", ctx, lambda path: pytest.fail("no weight"), lambda m, p: (m, p)) == ("M", "P")
    assert built == [("dpt-hybrid-midas", 7, "full")]
    record = loaded_models()["dpt-hybrid-midas"]
    assert record["random_init"] is True and record["seed"] == 7 and record["sha256"] is None


def test_a_stage_without_a_random_stand_in_raises_even_on_random_init_runs(tmp_path):
    ctx = StageContext(model_paths={"fer-mini-xception": str(tmp_path / "absent")}, options=RunOptions(random_init=True))
    with pytest.raises(MissingWeightError):
        load_model("fer-mini-xception", ctx, lambda path: pytest.fail("no weight"))


def test_the_recorded_file_can_be_one_inside_the_weight_folder(tmp_path):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "model.h5").write_bytes(b"h5")
    (tmp_path / "w" / "README").write_text("not hashed")
    ctx = StageContext(model_paths={"fer-mini-xception": str(tmp_path / "w")})
    load_model("fer-mini-xception", ctx, lambda path: path, recorded=lambda path: path / "model.h5")
    assert loaded_models()["fer-mini-xception"]["sha256"] == hashlib.sha256(b"h5").hexdigest()
