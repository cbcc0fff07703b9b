"""A crash inside the expression worker costs one image's row, never the run."""
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from skimage import data

from vistar.api import Face, FaceResult, StageContext, StageInput
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores
from vistar.features import faces
from vistar.features.expression_worker import ExpressionWorker, WorkerCrashed, WorkerLoadFailed
from vistar.ontology import Ontology

CRASH_FLAG = "VISTAR_TEST_CRASH_FLAG"


def crash_once_classifier(weight_path):
    """Classifier factory for the worker: the first request after the flag file appears kills the process
    (os._exit: no exception, no cleanup — like a segfault); afterwards every face is 'happy'."""
    def classify(crops):
        flag = Path(os.environ[CRASH_FLAG])
        if flag.exists():
            flag.unlink()
            os._exit(3)
        out = np.zeros((len(crops), 7), np.float32)
        out[:, 3] = 1.0
        return out
    return classify


def broken_weight_classifier(weight_path):
    """Classifier factory standing in for a corrupt weight file: loading it fails with a Python error."""
    raise ValueError(f"cannot read {weight_path}: truncated HDF5")


def counting_starts(worker, monkeypatch) -> list[int]:
    starts: list[int] = []
    real = worker._start
    monkeypatch.setattr(worker, "_start", lambda: (starts.append(1), real())[1])
    return starts


def test_load_failure_is_reported_with_its_reason_once_and_remembered(monkeypatch):
    worker = ExpressionWorker(f"{__name__}:broken_weight_classifier", "w.hdf5", timeout_s=60)
    starts = counting_starts(worker, monkeypatch)
    crops = np.zeros((1, 64, 64), np.uint8)
    try:
        for _ in range(3):
            with pytest.raises(WorkerLoadFailed, match="ValueError: cannot read w.hdf5: truncated HDF5"):
                worker.classify(crops)
        assert len(starts) == 1
    finally:
        worker.close()


def test_expression_failure_keeps_the_faces_of_items_without_an_expression_control(monkeypatch):
    found = [Face((10.0, 10.0, 60.0, 60.0), 0.9, ((20.0, 20.0),) * 6)]
    worker = ExpressionWorker(f"{__name__}:broken_weight_classifier", "w.hdf5", timeout_s=60)
    starts = counting_starts(worker, monkeypatch)
    ctx = StageContext(features=Ontology.load().data["features"])
    ctx.cache.update({"faces:detector": lambda image: list(found), "faces:expression": worker})
    image = np.zeros((80, 80, 3), np.uint8)
    items = [StageInput(image, None, {"count": 1}), StageInput(image, None, {"expression": "smiling"}),
             StageInput(image, None, {})]
    try:
        counted, asked, plain = faces.STAGE.compute(items, ctx)
    finally:
        worker.close()
    assert isinstance(counted, FaceResult) and counted.faces == tuple(found)
    assert "truncated HDF5" in (counted.expression_note or "")
    assert isinstance(asked, WorkerLoadFailed) and "truncated HDF5" in str(asked)
    assert isinstance(plain, FaceResult) and plain.faces == tuple(found) and len(starts) == 1


def test_worker_crash_raises_and_the_next_request_gets_a_fresh_worker(tmp_path, monkeypatch):
    flag = tmp_path / "crash"
    flag.touch()
    monkeypatch.setenv(CRASH_FLAG, str(flag))
    worker = ExpressionWorker(f"{__name__}:crash_once_classifier", "unused", timeout_s=60)
    try:
        crops = np.zeros((1, 64, 64), np.uint8)
        try:
            worker.classify(crops)
            raise AssertionError("the crash was not reported")
        except WorkerCrashed as exc:
            assert "exit code 3" in str(exc)
        assert worker.classify(crops)[0, 3] == 1.0 and worker.restarts == 1
    finally:
        worker.close()


@pytest.mark.slow
def test_run_records_an_error_row_and_scores_the_rest(tmp_path, monkeypatch):
    flag = tmp_path / "crash"
    flag.touch()
    monkeypatch.setenv(CRASH_FLAG, str(flag))
    images = tmp_path / "images" / "m"
    images.mkdir(parents=True)
    for pid in ("p1", "p2"):
        Image.fromarray(data.astronaut()).save(images / f"{pid}.png")
    prompts = tmp_path / "prompts.vistar"
    prompts.write_text('p1: [MS|CPA] a smiling astronaut {count=1, expression="smiling"}\n'
                       'p2: [MS|CPA] a smiling astronaut {count=1, expression="smiling"}\n')
    onto = tmp_path / "onto.yaml"
    onto.write_text(f'features:\n  faces:\n    classifier: "{__name__}:crash_once_classifier"\n')
    dummy = tmp_path / "weights.hdf5"
    dummy.write_bytes(b"not used by the test classifier")
    cfg = ScoreConfig(images=tmp_path / "images", prompts=prompts, out=tmp_path / "run", ontology=onto,
                      batch_size=2, model_paths={"fer-mini-xception": str(dummy)})
    run_score(cfg)
    rows = read_scores(tmp_path / "run").set_index("prompt_id")
    assert rows.loc["p1", "status"] == "error" and "expression worker died" in rows.loc["p1", "error"]
    assert rows.loc["p2", "status"] == "ok" and rows.loc["p2", "score"] == 1.0
