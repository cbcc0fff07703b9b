"""Scores through a real torch stage (tiny random-init DPT-hybrid feeding GC) do not depend on the batch size:
identical on CPU, within 1e-4 on a GPU (skipped without one), and a GPU run stays close to the CPU one."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.support.tiny_checkpoints import save_tiny_dpt  # noqa: E402
from vistar.engine.runner import ScoreConfig, run_score  # noqa: E402
from vistar.engine.store import read_scores  # noqa: E402
from vistar.synth.scenes import scene_pair  # noqa: E402

GPU_TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    root = tmp_path_factory.mktemp("gc-scene")
    (root / "images" / "m").mkdir(parents=True)
    lines = []
    for i, (h, w) in enumerate([(48, 64), (40, 40), (64, 48), (56, 72), (36, 60)]):
        Image.fromarray(scene_pair(i, h, w)[i % 2].image).save(root / "images" / "m" / f"p{i}.png")
        lines.append(f"p{i}: [GA|GC] a stone archway over a path")
    (root / "prompts.vistar").write_text("\n".join(lines) + "\n")
    return root, {"dpt-hybrid-midas": str(save_tiny_dpt(root / "dpt"))}


def _scores(scene, out, device="cpu", batch_size=1, depth_batch=4):
    root, weights = scene
    onto = out.parent / f"{out.name}.yaml"
    onto.write_text(f"features:\n  depth: {{batch_size: {depth_batch}}}\n")
    run_score(ScoreConfig(root / "images", root / "prompts.vistar", out, device=device, batch_size=batch_size,
                          ontology=onto, model_paths=weights))
    table = read_scores(out).sort_values("image").reset_index(drop=True)
    assert (table.status == "ok").all(), table.error.tolist()
    return table


def _cue_scores(table: pd.DataFrame) -> np.ndarray:
    return np.array([[c["score"] for _, c in sorted(json.loads(d)["cues"].items())] for d in table.details])


@pytest.mark.slow
def test_cpu_scores_identical_across_batch_sizes(scene, tmp_path):
    base = _scores(scene, tmp_path / "b1", batch_size=1, depth_batch=1)
    for i, (batch, depth_batch) in enumerate([(2, 4), (5, 2)]):
        other = _scores(scene, tmp_path / f"o{i}", batch_size=batch, depth_batch=depth_batch)
        assert other.score.tolist() == base.score.tolist()
        assert other.details.tolist() == base.details.tolist()  # every cue, bit for bit


@pytest.mark.gpu
def test_gpu_scores_within_tolerance_across_batch_sizes_and_of_cpu(scene, tmp_path):
    gpu = [_scores(scene, tmp_path / f"g{b}", device="cuda", batch_size=b, depth_batch=b) for b in (1, 2, 5)]
    for other in gpu[1:]:
        np.testing.assert_allclose(other.score, gpu[0].score, rtol=0, atol=GPU_TOLERANCE)
        np.testing.assert_allclose(_cue_scores(other), _cue_scores(gpu[0]), rtol=0, atol=GPU_TOLERANCE)
    cpu = _scores(scene, tmp_path / "cpu", batch_size=5)
    np.testing.assert_allclose(gpu[0].score, cpu.score, rtol=0, atol=1e-3)  # docs/performance.md#pipeline
