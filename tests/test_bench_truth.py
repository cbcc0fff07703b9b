"""`vistar bench` tells the truth: metric timings exclude the first (JIT-compiling) call, a missing optional
package is a skipped stage naming its install command (never a traceback), and the naive-vs-engine lines say what
each side includes."""
import sys
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support import fake_plugins
from vistar.api import FeatureStage, Metric, MetricResult
from vistar.cli import app
from vistar.cli.bench_cmd import naive_vs_engine_lines
from vistar.engine.bench import Item, run_bench
from vistar.models.errors import MissingDependencyError, as_missing_dependency
from vistar.prompts_dsl import parse_prompt

FIRST_CALL_S = 0.3
_calls: list[int] = []


def _slow_first(features, controls, params, prompt):
    """Like a numba kernel: the first call in a process compiles, later calls are fast."""
    if not _calls:
        time.sleep(FIRST_CALL_S)
    _calls.append(1)
    return MetricResult.ok(features["fake_brightness"])


SLOW_FIRST = Metric(name="TR", angle="TR", version="1", features=("fake_brightness",), fn=_slow_first)


def _needs_mediapipe(batch, ctx):
    import mediapipe  # noqa: F401  (None in sys.modules in these tests: as if not installed)
    return [0.0] * len(batch)


NEEDS_MEDIAPIPE = FeatureStage(name="fake_pose", version="1", compute=_needs_mediapipe)
USES_POSE = Metric(name="TR", angle="TR", version="1", features=("fake_pose",), fn=lambda f, c, p, pr: MetricResult.ok(1.0))


def _items(n):
    prompt = parse_prompt('[GD|TR] a sign {text="HI"}', id="p")
    return [Item(np.full((16, 16, 3), 10 * i, np.uint8), prompt) for i in range(n)]


def test_metric_timings_exclude_the_first_call(monkeypatch):
    from vistar.engine import registry

    fake_plugins.install(monkeypatch)
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.test_bench_truth:SLOW_FIRST"})
    _calls.clear()
    (metric,) = run_bench(_items(3), batch_sizes=(1,), repeats=2)["metrics"]
    assert metric["first_call_ms"] >= 1000 * FIRST_CALL_S
    assert metric["p95_ms"] < 100 * FIRST_CALL_S   # the compile call is not among the timed ones
    assert metric["timed_after_warmup"] is True


def test_a_missing_optional_package_is_a_skipped_stage_naming_the_install(monkeypatch):
    from vistar.engine import registry

    monkeypatch.setitem(sys.modules, "mediapipe", None)   # `import mediapipe` raises ModuleNotFoundError
    monkeypatch.setattr(registry, "FEATURES", {"fake_pose": "tests.test_bench_truth:NEEDS_MEDIAPIPE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.test_bench_truth:USES_POSE"})
    report = run_bench(_items(2), batch_sizes=(1,), repeats=1)
    (stage,) = report["stages"]
    assert stage["status"] == "skipped" and "pip install --no-deps mediapipe==0.10.21" in stage["note"]
    assert report["metrics"][0]["status"] == "skipped" and report["naive_vs_engine"] is None


def test_bench_cli_without_mediapipe_exits_0_with_a_skipped_pose_stage(tmp_path, monkeypatch):
    """The real faces/pose stages, with MediaPipe made unimportable (the state after `pip install 'vistar[all]'`)."""
    monkeypatch.setitem(sys.modules, "mediapipe", None)
    (tmp_path / "p.vistar").write_text('p: [CD|CPA] two people waving {count="2"}\n')
    result = CliRunner().invoke(app, ["bench", "--prompts", str(tmp_path / "p.vistar"), "--n", "1", "--size", "64",
                                      "--batch-sizes", "1", "--repeats", "1"], terminal_width=80)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "skipped" in result.output
    assert "mediapipe" in result.output
    assert "faces skipped: missing Python package 'mediapipe': pip install 'vistar[pose]'" in result.output
    tables = [line for line in result.output.splitlines() if line[:1] in "┏┃┡│└"]
    assert tables and max(len(line) for line in tables) <= 80   # reasons go below the tables, unwrapped


def test_a_missing_vistar_module_is_a_bug_not_a_skip():
    assert as_missing_dependency(ModuleNotFoundError("x", name="vistar.nothing")) is None
    missing = as_missing_dependency(ModuleNotFoundError("x", name="torch.nn"))
    assert isinstance(missing, MissingDependencyError) and "pip install 'vistar[cv]'" in str(missing)


def test_score_turns_a_missing_optional_package_into_skipped_rows(tmp_path, monkeypatch):
    from PIL import Image

    from vistar.engine import registry
    from vistar.engine.runner import ScoreConfig, run_score
    from vistar.engine.store import read_scores

    monkeypatch.setitem(sys.modules, "mediapipe", None)
    monkeypatch.setattr(registry, "FEATURES", {"fake_pose": "tests.test_bench_truth:NEEDS_MEDIAPIPE"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.test_bench_truth:USES_POSE"})
    (tmp_path / "img" / "m").mkdir(parents=True)
    Image.fromarray(np.zeros((16, 16, 3), np.uint8)).save(tmp_path / "img" / "m" / "p.png")
    (tmp_path / "p.vistar").write_text('p: [GD|TR] a sign {text="HI"}\n')
    run_score(ScoreConfig(images=tmp_path / "img", prompts=tmp_path / "p.vistar", out=tmp_path / "run"))
    (row,) = read_scores(tmp_path / "run").to_dict("records")
    assert row["status"] == "skipped" and "pip install --no-deps mediapipe==0.10.21" in row["error"]


@pytest.mark.parametrize("naive_calls,engine_calls,expect", [(16, 16, "nothing to share"), (48, 16, "sharing saves 32")])
def test_naive_vs_engine_lines_state_what_each_side_includes(naive_calls, engine_calls, expect):
    cmp_ = {"images": 16, "naive_s": 4.83, "engine_end_to_end_s": 5.19, "engine_batch": 8, "rows": {"ok": 16},
            "speedup": 4.83 / 5.19, "naive_steady_ips": 3.4, "engine_steady_ips": 3.6,
            "stage_calls": {"naive": naive_calls, "engine": engine_calls}}
    text = "\n".join(naive_vs_engine_lines(cmp_))
    assert "neither counts process start" in text and "model loading" in text
    assert expect in text and "0.93x end to end" in text and "1.06x steady" in text


def _returns_missing(batch, ctx):
    from vistar.models.errors import MissingWeightError

    return [MissingWeightError("fake-expression")] * len(batch)   # as faces does per image without FER weights


RETURNS_MISSING = FeatureStage(name="fake_faces", version="1", compute=_returns_missing)
USES_FACES = Metric(name="TR", angle="TR", version="1", features=("fake_faces",), fn=lambda f, c, p, pr: MetricResult.ok(1.0))


def test_a_stage_that_returns_a_missing_weight_per_image_is_reported_skipped(monkeypatch):
    """Not `ok` with timings of nothing: the row names the weight, and the stages after it are skipped too."""
    from vistar.engine import registry

    monkeypatch.setattr(registry, "FEATURES", {"fake_faces": "tests.test_bench_truth:RETURNS_MISSING"})
    monkeypatch.setattr(registry, "METRICS", {"TR": "tests.test_bench_truth:USES_FACES"})
    report = run_bench(_items(2), batch_sizes=(1,), repeats=1)
    (stage,) = report["stages"]
    assert stage["status"] == "skipped" and "fake-expression" in stage["note"] and stage["p50_ms"] is None
    assert report["metrics"][0]["status"] == "skipped"
