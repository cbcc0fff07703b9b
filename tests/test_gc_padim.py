"""PaDiM (GC cue 6) with a random-initialised ResNet-18 through the real loading path; fit command; stats hash."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from vistar.api import StageContext, StageInput  # noqa: E402
from vistar.cli import app  # noqa: E402
from vistar.engine.params import metric_params  # noqa: E402
from vistar.engine.registry import feature_stage  # noqa: E402
from vistar.features.padim import BackboneConfig, fit_stats, load_backbone, load_stats, save_stats  # noqa: E402
from vistar.metrics.gc import cue_scores  # noqa: E402
from vistar.ontology import Ontology  # noqa: E402
from vistar.prompts_dsl import parse_prompt  # noqa: E402

CONFIG = BackboneConfig(input_size=64, channels=24, pool=1, seed=0)


def _random_resnet(path, seed):
    torch.manual_seed(seed)
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), path)
    return str(path)


def _stripes(rng, size=64):
    """In-distribution: soft horizontal stripes, random phase and tint."""
    y = np.arange(size)[:, None]
    wave = 0.5 + 0.4 * np.sin(2 * np.pi * (y / 16 + rng.random()))
    tint = 0.8 + 0.2 * rng.random(3)
    return (np.repeat(wave, size, 1)[..., None] * tint * 255).astype(np.uint8)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    root = tmp_path_factory.mktemp("padim")
    paths = {"resnet18-imagenet": _random_resnet(root / "r18.pth", 0)}
    rng = np.random.default_rng(0)
    refs = [_stripes(rng) for _ in range(16)]
    backbone = load_backbone(paths, CONFIG)
    stats = fit_stats(backbone(refs), backbone)
    stats_file = root / "stats.npz"
    save_stats(stats, stats_file)
    return paths, stats_file, refs, root


def _padim(paths, stats_file, images):
    ctx = StageContext(model_paths=paths, features={"padim": {"stats": str(stats_file)}})
    prompt = parse_prompt("[GA|GC] a striped wall")
    return feature_stage("padim").compute([StageInput(im, prompt, {}) for im in images], ctx)


@pytest.mark.slow
def test_out_of_distribution_image_scores_lower(fitted):
    paths, stats_file, _, _ = fitted
    rng = np.random.default_rng(99)
    held_out = _stripes(rng)
    noise = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    in_dist, out_dist = _padim(paths, stats_file, [held_out, noise])
    assert out_dist.score > in_dist.score
    params = metric_params(Ontology.load(), "GC")
    flat = np.zeros((64, 64), np.float32)
    cue_in = cue_scores(held_out, flat, in_dist, params)["padim"]["score"]
    cue_out = cue_scores(noise, flat, out_dist, params)["padim"]["score"]
    assert cue_out < cue_in and cue_out < 0.5 and cue_in > 0.8


def test_stage_without_stats_yields_no_cue_and_loads_nothing():
    ctx = StageContext(model_paths={}, features={"padim": {"stats": None}})
    out = feature_stage("padim").compute([StageInput(np.zeros((8, 8, 3), np.uint8), parse_prompt("[GA|GC] x"), {})], ctx)
    assert out == [None] and ctx.cache == {}


def test_stats_hash_detects_edits_and_backbone_mismatch_is_refused(fitted, tmp_path):
    paths, stats_file, refs, root = fitted
    stats = load_stats(stats_file)
    assert len(stats.meta["hash"]) == 64 and stats.meta["n_images"] == 16
    edited = tmp_path / "edited.npz"
    mean = stats.mean.copy()
    mean[0, 0, 0] += 1.0
    np.savez(edited, mean=mean, inv_cov=stats.inv_cov, meta=np.array(__import__("json").dumps(stats.meta)))
    with pytest.raises(ValueError, match="stored hash"):
        load_stats(edited)
    other = {"resnet18-imagenet": _random_resnet(tmp_path / "other.pth", 1)}
    with pytest.raises(ValueError, match="refit"):
        _padim(other, stats_file, refs[:1])


def test_fit_padim_command_writes_loadable_stats(fitted, tmp_path):
    paths, _, refs, _ = fitted
    folder = tmp_path / "refs"
    folder.mkdir()
    for k, im in enumerate(refs[:6]):
        Image.fromarray(im).save(folder / f"r{k}.png")
    (folder / "notes.txt").write_text("not an image")
    out = tmp_path / "fit.npz"
    result = CliRunner().invoke(app, ["gc", "fit-padim", str(folder), "--out", str(out), "--backbone", "resnet18-imagenet",
                                      "--model-path", f"resnet18-imagenet={paths['resnet18-imagenet']}", "--input-size", "64",
                                      "--channels", "16", "--pool", "2"])
    assert result.exit_code == 0, result.output
    stats = load_stats(out)
    assert stats.meta["n_images"] == 6 and stats.mean.shape == (8, 8, 16) and stats.meta["hash"] in result.output
