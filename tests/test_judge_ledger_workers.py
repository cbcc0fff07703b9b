"""The judge's usage ledger is the sum over every scoring process: `vistar score` with one process, with the
`--cpu-workers 2` pool and with Ray actors reports (terminal line and judge_usage.json) exactly the requests the
judge server received and the prompt tokens it billed for them, over more batches than workers (each worker scores
several)."""
from __future__ import annotations

import json
import os
import re

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support.vlm_helpers import solid
from vistar.cli import app
from vistar.vlm.testing_server import JudgeServer, usage_tokens

pytestmark = pytest.mark.slow

N_PROMPTS = 10   # batch size 2: five batches, so each of two workers scores more than one


@pytest.fixture()
def hwpq_run(tmp_path, monkeypatch):
    """SF prompts with generated questionnaires and one image each; returns (folder, judge server)."""
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))
    lines = [f"s{i}: [GD|SF] a poster fusing style {i} and art deco" for i in range(N_PROMPTS)]
    (tmp_path / "prompts.vistar").write_text("\n".join(lines) + "\n")
    folder = tmp_path / "images" / "modelA"
    folder.mkdir(parents=True)
    for i in range(N_PROMPTS):
        Image.fromarray(solid((20 * i, 200 - 10 * i, 90))).save(folder / f"s{i}.png")
    with JudgeServer() as server:
        gen = CliRunner().invoke(app, ["hwpq", "generate", str(tmp_path / "prompts.vistar"), "--judge-url", server.url,
                                       "--judge-model", "test-judge"])
        assert gen.exit_code == 0, gen.output
        yield tmp_path, server


def _counted(tmp, server, out: str, *executor: str) -> tuple[int, int, int]:
    """(requests the server received during the run, judge_usage.json's count, the terminal line's count)."""
    before = len(server.requests)
    result = CliRunner().invoke(app, ["score", str(tmp / "images"), "--prompts", str(tmp / "prompts.vistar"), "--out",
                                      str(tmp / out), "--batch-size", "2", "--judge-url", server.url, "--judge-model",
                                      "test-judge", "--judge-mode", "batched", *executor])
    assert result.exit_code == 0, result.output
    received = len(server.requests) - before
    usage = json.loads((tmp / out / "judge_usage.json").read_text())
    assert usage["prompt_tokens"] == sum(usage_tokens(body["messages"]) for body in server.requests[before:])
    printed = re.search(r"judge: (\d+) HTTP requests", " ".join(result.output.split()))
    assert printed, result.output
    assert usage["images"] == N_PROMPTS and usage["failed_questions"] == 0
    return received, usage["http_requests"], int(printed.group(1))


def test_pool_workers_ledgers_are_summed(hwpq_run):
    tmp, server = hwpq_run
    received, written, printed = _counted(tmp, server, "pool", "--cpu-workers", "2")
    assert received == 3 * N_PROMPTS  # three votes per image, one batched call each
    assert written == printed == received


def test_one_process_ledger_counts_every_batch(hwpq_run):
    tmp, server = hwpq_run
    received, written, printed = _counted(tmp, server, "one", "--cpu-workers", "1")
    assert written == printed == received == 3 * N_PROMPTS


@pytest.mark.ray
def test_ray_actors_ledgers_are_summed(hwpq_run):
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=2, object_store_memory=200 * 1024**2, include_dashboard=False, log_to_driver=False)
    try:
        tmp, server = hwpq_run
        received, written, printed = _counted(tmp, server, "ray", "--executor", "ray", "--cpu-workers", "2")
    finally:
        ray.shutdown()
    assert written == printed == received == 3 * N_PROMPTS
