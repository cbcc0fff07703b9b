"""End to end: `vistar hwpq generate` then `vistar score` of SF prompts against the local judge server with
faults switched on — retries happen, failures are recorded and never cached, a rerun re-asks only them,
the cache alone rebuilds the scores, and the API key never reaches a file or the console."""
from __future__ import annotations

import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support.vlm_helpers import BLUE, RED, solid
from vistar.cli import app
from vistar.engine.store import read_scores
from vistar.vlm.testing_server import JudgeServer, image_facts

SECRET = "sk-vistar-e2e-7f3a9c"
PROMPTS = "s1: [GD|SF] a poster fusing ukiyo-e and art deco\ns2: [IL|SF] a cat drawn in cubist and baroque manner\ns3: [GD|SF] a teapot mixing bauhaus and rococo\n"
COLOURS = {"s1": RED, "s2": BLUE, "s3": (200, 25, 25)}  # s3: another dark red, a distinct image


@pytest.fixture()
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VISTAR_E2E_KEY", SECRET)
    (tmp_path / "prompts.vistar").write_text(PROMPTS)
    folder = tmp_path / "images" / "modelA"
    folder.mkdir(parents=True)
    for pid, rgb in COLOURS.items():
        Image.fromarray(solid(rgb)).save(folder / f"{pid}.png")
    # more retries than injected transient faults, so a request that draws several still succeeds
    (tmp_path / "judge.yaml").write_text("timeout_s: 0.5\nbackoff_s: 0.01\nmax_backoff_s: 0.05\nmax_retries: 5\n"
                                         "max_reasks: 1\nconcurrency: 4\n")
    return tmp_path


def _score(tmp, server, out, *extra):
    args = ["score", str(tmp / "images"), "--prompts", str(tmp / "prompts.vistar"), "--out", str(tmp / out)]
    if server is not None:
        args += ["--judge-url", server.url, "--judge-model", "test-judge", "--judge-key-env", "VISTAR_E2E_KEY",
                 "--judge-config", str(tmp / "judge.yaml")]
    result = CliRunner().invoke(app, args + ["--partial-ok"] + list(extra))  # some runs here expect error rows
    assert result.exit_code == 0, result.output
    frame = read_scores(tmp / out)
    return " ".join(result.output.split()), {r.prompt_id: r for r in frame.itertuples()}


def _is_blue(body) -> bool:
    url = body["messages"][-1]["content"][1]["image_url"]["url"] if isinstance(body["messages"][-1]["content"], list) else None
    return url is not None and image_facts(url)[0] == "blue"


def test_without_a_judge_rows_are_skipped_with_instructions(setup):
    _, rows = _score(setup, None, "run0")
    assert {r.status for r in rows.values()} == {"skipped"}
    assert "--judge-url" in rows["s1"].error and "--judge-model" in rows["s1"].error


@pytest.mark.slow
def test_faults_retries_rerun_and_cache_rebuild(setup):
    tmp = setup
    with JudgeServer(timeout_sleep_s=1.5) as server:
        gen = CliRunner().invoke(app, ["hwpq", "generate", str(tmp / "prompts.vistar"), "--judge-url", server.url,
                                       "--judge-model", "test-judge", "--judge-key-env", "VISTAR_E2E_KEY"])
        assert gen.exit_code == 0 and "3 written" in " ".join(gen.output.split()), gen.output
        assert len(list((tmp / "home" / "hwpq").glob("*.json"))) == 3
        n_generate = len(server.requests)

        # transient faults on the first requests, a persistent one for every question about the blue image
        server.faults.extend(["429", "500", "timeout", "truncated", "nonjson"])
        server.fault_for = lambda body: "500" if _is_blue(body) else None
        out1, rows = _score(tmp, server, "run1", "--judge-mode", "per-question")
        calls_per_image = 2 * 2 * 3  # two P/N pairs, k = 3 votes
        first_run = len(server.requests) - n_generate
        assert first_run > 2 * calls_per_image + 5  # the 5 transient faults were retried, the blue image's calls too
        # expectations from the server's documented rules: L1 pair names no colour and the red image is dark (S=0);
        # L4 asks "predominantly red?" (yes) vs "predominantly blue?" (no): S=1, level weight 0.4
        assert rows["s1"].status == "ok" and rows["s1"].score == pytest.approx(0.4)
        assert rows["s3"].status == "ok" and rows["s3"].score == pytest.approx(0.4)
        assert rows["s2"].status == "error" and "judge question(s)" in rows["s2"].error and "HTTP 500" in rows["s2"].error
        import sqlite3
        db = sqlite3.connect(tmp / "home" / "judge_cache.sqlite")
        cached = db.execute("SELECT COUNT(*) FROM answers WHERE protocol = 'hwpq@1'").fetchone()[0]
        db.close()
        assert cached == 2 * calls_per_image  # nothing of the failed image was stored
        usage = json.loads((tmp / "run1" / "judge_usage.json").read_text())
        assert usage["failed_questions"] == calls_per_image and usage["images"] == 3

        server.fault_for = None
        before = len(server.requests)
        _, rows = _score(tmp, server, "run1", "--retry-errors", "--judge-mode", "per-question")
        assert len(server.requests) - before == calls_per_image  # only the failed image is asked again
        assert rows["s2"].status == "ok" and rows["s2"].score == pytest.approx(0.0)
        details = json.loads(rows["s2"].details)
        assert details["votes"]["L4.1.P"] == [False, False, False] and details["k"] == 3

        before = len(server.requests)
        _, rebuilt = _score(tmp, server, "run2", "--judge-cache-only", "--judge-mode", "per-question")
        assert len(server.requests) == before
        assert {k: r.score for k, r in rebuilt.items()} == pytest.approx({"s1": 0.4, "s2": 0.0, "s3": 0.4})
        assert server.auth_headers and set(server.auth_headers) == {f"Bearer {SECRET}"}

    for path in tmp.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"API key leaked into {path}"
    assert SECRET not in out1


@pytest.mark.slow
def test_batched_mode_is_cheaper_and_agrees(setup):
    tmp = setup
    (tmp / "prices.yaml").write_text('models:\n  test-judge: {input: 2.5, output: 10.0}\n')
    with (tmp / "judge.yaml").open("a") as fh:
        fh.write(f"prices: {tmp / 'prices.yaml'}\n")
    with JudgeServer() as server:
        CliRunner().invoke(app, ["hwpq", "generate", str(tmp / "prompts.vistar"), "--judge-url", server.url, "--judge-model", "test-judge"])
        out_pq, per_question = _score(tmp, server, "pq", "--judge-mode", "per-question")
        out_b, batched = _score(tmp, server, "b", "--judge-mode", "batched")
    assert {k: r.score for k, r in per_question.items()} == {k: r.score for k, r in batched.items()}
    pq = json.loads((tmp / "pq" / "judge_usage.json").read_text())
    b = json.loads((tmp / "b" / "judge_usage.json").read_text())
    assert pq["http_requests"] == 3 * 12 and b["http_requests"] == 3 * 3
    assert b["cost_usd"] < pq["cost_usd"] / 2
    assert "per image" in out_b and "per 1000 prompts" in out_b


def test_validate_command_and_invalid_files_are_error_rows(setup):
    tmp = setup
    folder = tmp / "home" / "hwpq"
    folder.mkdir(parents=True)
    from vistar.prompts_dsl import read_prompts

    prompts = {p.id: p for p in read_prompts(tmp / "prompts.vistar").prompts}
    messy = {"schema_version": 1, "levels": [{"level": "L1", "weight": 2, "pairs": [
        {"id": "a", "weight": 1, "positive": "Is there a poster?", "negative": "Is the poster missing?"}]}]}
    path = folder / f"{prompts['s1'].fingerprint}.json"
    path.write_text(json.dumps(messy))
    runner = CliRunner()
    res = runner.invoke(app, ["hwpq", "validate", str(folder)])
    assert res.exit_code == 1 and "needs repair" in res.output and "renormalised" in " ".join(res.output.split())
    with JudgeServer() as server:
        _, rows = _score(tmp, server, "bad")
        assert len(server.requests) == 0
    assert rows["s1"].status == "error" and path.name in rows["s1"].error
    assert rows["s2"].status == "skipped" and "vistar hwpq generate" in rows["s2"].error
    res = runner.invoke(app, ["hwpq", "validate", str(folder), "--fix"])
    assert res.exit_code == 0 and json.loads(path.read_text())["levels"][0]["weight"] == 1.0
    assert runner.invoke(app, ["hwpq", "validate", str(path)]).exit_code == 0
