"""A small mixed-angle workload scored with real models where they ship with their packages (RapidOCR for TR,
MediaPipe for CPA) and tiny random-init checkpoints elsewhere (YOLO-seg for LI, DPT for GC, CLIP/DINOv2/
GroundingDINO/SAM for CSE), plus one prompt whose fake stage raises, for the executor equality tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

COLUMNS = ["image", "image_sha256", "model", "prompt_id", "sample", "role", "angle", "metric", "score", "status",
           "error", "details", "set", "metric_version", "key"]

PROMPTS = """\
t1: [GD|TR] A poster that says "GRAND OPENING"
t2: [GD|TR] A sign that says "HANDLE WITH CARE"
l1: [PH|LI] three wooden blocks on a floor, low light from the left
c1: [MS|CPA] an astronaut {count=1}
g1: [GA|GC] a stone archway over a path
fox: [SA|CSE] Storyboard of a red fox: the fox wakes up in the den; the fox hunts in the snow; the fox sleeps under a tree; the fox jumps {subject="red fox", grid="2x2"}
"""
# random-init detectors: thresholds at 0 so every query counts; CSE coverage over the whole cosine range
ONTOLOGY = ("features:\n  subject_masks: {box_threshold: 0.0, text_threshold: 0.0}\n"
            "metrics:\n  CSE:\n    params: {cov_lo: -1.0, cov_hi: 1.0}\n")


def build_workload(root: Path) -> tuple[Path, dict]:
    """Images for two models (the second with other seeds), the prompt file and ontology; returns (root, weights)."""
    from skimage import data

    from tests.support.tiny_checkpoints import save_tiny_dpt, save_tiny_yolo_seg
    from vistar.synth.lighting import sample_scene
    from vistar.synth.scenes import scene_pair
    from vistar.synth.storyboards import make_storyboard
    from vistar.synth.text import render_text
    from vistar.synth.tiny_models import save_tiny_cse_models

    weights = {**save_tiny_cse_models(root / "weights"), "dpt-hybrid-midas": str(save_tiny_dpt(root / "weights" / "dpt")),
               "yolov8l-seg": str(save_tiny_yolo_seg(root / "weights" / "yolo")),
               "ssd-mobilenet-v2-coco": "/nonexistent/weights", "fer-mini-xception": "/nonexistent/weights"}
    person = np.asarray(Image.fromarray(data.astronaut()).resize((256, 256)))
    for k, model in enumerate(("gen-a", "gen-b")):
        folder = root / "images" / model
        folder.mkdir(parents=True, exist_ok=True)
        images = {"t1": render_text("GRAND OPENING", size=256, font_size=24 + 4 * k),
                  "t2": render_text("HANDLE WITH CARE", size=256, font_size=22, background=(40, 60, 50 + 40 * k)),
                  "l1": sample_scene([-0.94, 0.34, 0.0], seed=3 + k, size=(120, 160)).image,
                  "c1": person if k == 0 else person[:, ::-1],
                  "g1": scene_pair(k, 48, 64)[k % 2].image,
                  "fox": make_storyboard(2, 2, 160, 160, seed=1 + k, subject=True).image}
        for name, image in images.items():
            Image.fromarray(np.asarray(image)).save(folder / f"{name}.png")
    (root / "prompts.vistar").write_text(PROMPTS)
    (root / "onto.yaml").write_text(ONTOLOGY)
    return root, weights


def score_table(workload, out: Path, **options) -> pd.DataFrame:
    """The run's full table in a fixed order (every column a reader sees)."""
    root, weights = workload
    run_score(ScoreConfig(images=root / "images", prompts=root / "prompts.vistar", out=out, batch_size=2,
                          ontology=root / "onto.yaml", model_paths=weights, **options))
    return read_scores(out)[COLUMNS].sort_values(["image", "metric"]).reset_index(drop=True)


def _dying_stats(batch, ctx):
    """The fake stage's output, but the first process to see an image named `*kill*` SIGKILLs itself, as the
    kernel's OOM killer would (once per test: the marker file named by $VISTAR_TEST_KILL_MARKER)."""
    import os
    import signal

    from tests.support import engine_plugins

    marker = os.environ.get("VISTAR_TEST_KILL_MARKER")
    if marker and any("kill" in str(item.prompt.id) for item in batch):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            with open(marker, "w") as fh:
                fh.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
    return engine_plugins._stats(batch, ctx)


def _poison_stats(batch, ctx):
    """The fake stage's output, but every process that sees an image named `*kill*` SIGKILLs itself: an image
    that always crashes a native library."""
    import os
    import signal

    from tests.support import engine_plugins

    if any("kill" in str(item.prompt.id) for item in batch):
        os.kill(os.getpid(), signal.SIGKILL)
    return engine_plugins._stats(batch, ctx)


def fake_workload(root: Path, n: int = 12) -> Path:
    """n small images for two models, one prompt whose stage fails and one whose scoring kills its worker."""
    rng = np.random.default_rng(7)
    lines = []
    for i in range(n):
        pid = "p_kill" if i == 5 else f"p{i}"
        lines.append(f'{pid}: [GD|TR] sign "{i}"' + (' {stage="fail"}' if i == 3 else ""))
        for model in ("m0", "m1"):
            (root / "imgs" / model).mkdir(parents=True, exist_ok=True)
            Image.fromarray(rng.integers(0, 256, (16 + i, 20, 3), dtype=np.uint8)).save(root / "imgs" / model / f"{pid}.png")
    (root / "p.vistar").write_text("\n".join(lines) + "\n")
    return root


def install_dying_plugins(monkeypatch, stage: str = "DYING_STAGE") -> None:
    """Registry tables with the fake TR stage that kills its worker once (`DYING_STAGE`: see `_dying_stats`) or
    on every try (`POISON_STAGE`: `_poison_stats`)."""
    from tests.support import engine_plugins
    from vistar.engine import registry

    engine_plugins.install(monkeypatch)
    monkeypatch.setitem(registry.FEATURES, "fake_stats", f"tests.support.executor_helpers:{stage}")


def fake_table(root: Path, out: Path, batch_size: int = 2, **options) -> pd.DataFrame:
    run_score(ScoreConfig(images=root / "imgs", prompts=root / "p.vistar", out=out, batch_size=batch_size, **options))
    return read_scores(out)[COLUMNS].sort_values(["image", "metric"]).reset_index(drop=True)


def _fake_stage(compute):
    from vistar.api import FeatureStage

    return FeatureStage(name="fake_stats", version="1", compute=compute)


DYING_STAGE = _fake_stage(_dying_stats)
POISON_STAGE = _fake_stage(_poison_stats)
