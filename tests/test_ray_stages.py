"""The Ray pipeline's actors, called in this process (no Ray): every shape of pipeline (decode and metrics pools
of their own around GPU groups, or fused into the CPU groups' actors) gives the rows of `score_batch` for every
kind of row (ok, a raising stage, its dependant, a missing weight, a raising or non-finite metric, an unreadable
image); and what travels between actors keeps exceptions and survives a feature that cannot be pickled.
"""
from __future__ import annotations

import errno
import pickle
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.support import engine_plugins
from tests.support.executor_helpers import COLUMNS
from vistar.api import FeatureStage, Metric, MetricResult
from vistar.engine import registry
from vistar.engine.executors import local
from vistar.engine.executors.ray_plan import RayStage, actor_specs
from vistar.engine.executors.ray_stages import InFlight, dumps
from vistar.engine.executors.work import SINGLE_THREAD_ENV, WorkerSetup, pack
from vistar.engine.images import DEFAULT_MAX_PIXELS
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores
from vistar.models.errors import MissingDependencyError, MissingWeightError


def _stats_or_missing(batch, ctx):
    out = engine_plugins._stats(batch, ctx)
    return [MissingWeightError("fake-weights") if item.controls.get("stage") == "skip" else o for item, o in zip(batch, out)]


def _double(batch, ctx):
    return [{"double": 2 * item.deps["fake_stats"]["mean"]} for item in batch]


STATS = FeatureStage(name="fake_stats", version="1", compute=_stats_or_missing)
DOUBLE = FeatureStage(name="fake_double", version="1", compute=_double, requires=("fake_stats",))
METRIC_DOUBLE = Metric(name="TR.double", angle="TR", version="1", features=("fake_double",),
                                fn=lambda f, c, p, prompt: MetricResult.ok(f["fake_double"]["double"] / 510.0))
FEATURES = {"fake_stats": f"{__name__}:STATS", "fake_double": f"{__name__}:DOUBLE"}
METRICS = {**engine_plugins.METRICS, "TR.double": f"{__name__}:METRIC_DOUBLE"}
# (pipeline, each actor's report's stage times, whether each state an actor sends on has dropped its pixels)
PIPELINES = {
    # two GPU groups: decode and metrics pools of their own; pixels leave after the last stage group
    "light pools": ([RayStage("decode", (), 1, 0.0), RayStage("stages", ("fake_stats",), 1, 0.5, 0.5),
                     RayStage("stages", ("fake_double",), 1, 0.5, 0.5), RayStage("metrics", (), 1, 0.0)],
                    [{"decode"}, {"fake_stats"}, {"fake_double"}, {"metrics"}], [False, False, True]),
    # two CPU groups: the first decodes, the last scores
    "fused": ([RayStage("stages", ("fake_stats",), 1, 0.5, decode=True),
               RayStage("stages", ("fake_double",), 1, 0.5, score=True)],
              [{"decode"}, {"fake_stats"}, {"fake_double"}, {"metrics"}], [False]),
    # a CPU run: one pool does it all, nothing travels but jobs and rows
    "one pool": ([RayStage("stages", ("fake_stats", "fake_double"), 1, 1.0, decode=True, score=True)],
                 [{"decode"}, {"fake_stats", "fake_double"}, {"metrics"}], []),
}


@pytest.fixture
def workload(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "FEATURES", dict(FEATURES))
    monkeypatch.setattr(registry, "METRICS", dict(METRICS))
    for name in SINGLE_THREAD_ENV:   # the actors set these in their process: here, restored after the test
        monkeypatch.setenv(name, "1")
    controls = ["", ' {stage="fail"}', ' {stage="skip"}', ' {odd="raise"}', ' {odd="nan"}', "", ""]
    (tmp_path / "p.vistar").write_text("".join(f'p{i}: [GD|TR] sign "{i}"{c}\n' for i, c in enumerate(controls)))
    rng = np.random.default_rng(3)
    for model in ("m0", "m1"):
        (tmp_path / "imgs" / model).mkdir(parents=True)
        for i in range(len(controls)):
            Image.fromarray(rng.integers(0, 256, (12 + i, 16, 3), dtype=np.uint8)).save(tmp_path / "imgs" / model / f"p{i}.png")
    (tmp_path / "imgs" / "m1" / "p5.png").write_bytes(b"not an image")
    return tmp_path


def _table(root, out):
    run_score(ScoreConfig(images=root / "imgs", prompts=root / "p.vistar", out=out, batch_size=3, cpu_workers=1))
    return read_scores(out)[COLUMNS].sort_values(["image", "metric"]).reset_index(drop=True)


@pytest.mark.parametrize("shape", list(PIPELINES))
def test_actor_chain_gives_the_rows_of_score_batch(workload, monkeypatch, shape):
    pipeline, reported, drops = PIPELINES[shape]
    expected = _table(workload, workload / "direct")
    statuses = expected.set_index(["image", "metric"]).status
    assert statuses[("m0/p0.png", "TR.double")] == "ok" and statuses[("m0/p1.png", "TR.double")] == "error"
    assert statuses[("m0/p2.png", "TR")] == "skipped" and statuses[("m1/p5.png", "TR")] == "error"
    dropped = []

    def through_actors(groups, images, ctx, ontology, timings=None):
        setup = pickle.dumps(WorkerSetup.of_run(SimpleNamespace(max_pixels=DEFAULT_MAX_PIXELS), ctx, ontology))
        blob = dumps(InFlight(pack(groups)))
        specs = actor_specs(pipeline, DEFAULT_MAX_PIXELS)
        for k, spec in enumerate(specs):
            blob = spec["cls"](**spec["kwargs"]).run([setup], blob)
            if k < len(specs) - 1:
                dropped.append(all(image is None or isinstance(image, Exception) for image in pickle.loads(blob).images))
        reports = pickle.loads(blob)
        assert [set(r.stage_seconds) for r in reports] == reported
        return reports[-1].rows

    monkeypatch.setattr(local, "score_batch", through_actors)
    pd.testing.assert_frame_equal(_table(workload, workload / "actors"), expected)
    assert dropped == drops * 5   # 14 images, 3 a batch


def test_exceptions_travel_by_value():
    errors = [MissingWeightError("sam-vit-huge", "put it in ~/w"), MissingDependencyError("mediapipe"),
              OSError(errno.ENOENT, "no such file", "x.png"), RuntimeError("stage failed on purpose")]
    errors[3].add_note("traceback ...")
    state = pickle.loads(dumps(InFlight(b"", features=[{f"s{k}": e for k, e in enumerate(errors)}])))
    for k, original in enumerate(errors):
        back = state.features[0][f"s{k}"]
        assert type(back) is type(original) and str(back) == str(original) and back.args == original.args
    assert state.features[0]["s0"].name == "sam-vit-huge" and state.features[0]["s2"].errno == errno.ENOENT
    assert state.features[0]["s3"].__notes__ == ["traceback ..."]
    # plain pickling calls MissingWeightError(message): another message, the reason for the by-value form
    assert str(pickle.loads(pickle.dumps(errors[0]))) != str(errors[0])


def test_a_feature_that_cannot_be_pickled_fails_only_its_stage():
    state = InFlight(b"", features=[{"ok": np.arange(3), "live": lambda: None}, {"ok": 1.5}])
    back = pickle.loads(dumps(state))
    assert back.features[0]["ok"].tolist() == [0, 1, 2] and back.features[1] == {"ok": 1.5}
    failure = back.features[0]["live"]
    assert isinstance(failure, RuntimeError) and "stage 'live' output cannot be sent to the next Ray stage" in str(failure)
