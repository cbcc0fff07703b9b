"""The bundled example set is what examples/generate.py makes, and the real pipeline ranks its models
sharp > typo > drop on every prompt (the README's demo must show clearly separated scores, a typo costing less
than a missing word)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_bundled_examples_match_generator(tmp_path):
    spec = importlib.util.spec_from_file_location("examples_generate", EXAMPLES / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    generate.generate(tmp_path)
    assert (tmp_path / "prompts.vistar").read_text() == (EXAMPLES / "prompts.vistar").read_text()
    made = sorted(p.relative_to(tmp_path) for p in (tmp_path / "images").rglob("*.png"))
    assert made == sorted(p.relative_to(EXAMPLES) for p in (EXAMPLES / "images").rglob("*.png"))
    assert len(made) == 18
    for rel in made:  # a FreeType build may anti-alias a few edge pixels differently: compare, not hash
        a = np.asarray(Image.open(tmp_path / rel), dtype=np.int16)
        b = np.asarray(Image.open(EXAMPLES / rel), dtype=np.int16)
        assert a.shape == b.shape == (512, 512, 3) and np.abs(a - b).mean() < 1.0, rel


@pytest.mark.slow
def test_example_models_ranked_sharp_typo_drop(tmp_path):
    summary = run_score(ScoreConfig(images=EXAMPLES / "images", prompts=EXAMPLES / "prompts.vistar", out=tmp_path / "run"))
    assert summary.rows_by_status == {"ok": 18} and not summary.problems
    scores = read_scores(tmp_path / "run").pivot(index="prompt_id", columns="model", values="score")
    assert scores.shape == (6, 3)
    assert (scores["sharp"] >= 0.95).all(), scores
    assert (scores["sharp"] > scores["typo"]).all() and (scores["typo"] > scores["drop"]).all(), scores
    means = scores.mean()
    # TR's word alignment (docs/metrics/tr.md): one wrong letter costs a fraction of its word, a dropped word a
    # whole one, so the typo model sits close below the sharp one and the drop model far below both
    assert 0.03 <= means["sharp"] - means["typo"] <= 0.15, means
    assert means["typo"] - means["drop"] >= 2 * (means["sharp"] - means["typo"]), means
