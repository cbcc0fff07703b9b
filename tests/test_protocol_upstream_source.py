"""The benchmarks' judge code is read from a checkout the user has: found in the usual layouts, refused with the
piece named when it differs from the pinned commit, fetched with git (here from a local repository through a
file:// URL), and `vistar score --suite NAME --upstream DIR` judges with it end to end and says so."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support.protocol_helpers import shared
from tests.support.upstream_helpers import upstream_dir
from tests.support.vlm_helpers import BLACK, WHITE, solid
from vistar.cli import app
from vistar.engine.store import read_scores
from vistar.vlm.protocols import upstream_source
from vistar.vlm.protocols.upstream_source import UPSTREAMS, Upstream, UpstreamError, checkout, verified_source
from vistar.vlm.testing_server import JudgeServer


def copy_of(bench: str, dest):
    shutil.copytree(upstream_dir(bench), dest)
    return dest


def test_a_checkout_is_found_in_the_usual_layouts():
    data_root = shared("WISE").parent
    assert checkout("WISE", data_root) == checkout("WISE", data_root / "WISE") == checkout("WISE", upstream_dir("WISE"))
    with pytest.raises(UpstreamError, match="no GenExam upstream checkout here.*vistar upstream fetch GenExam"):
        checkout("GenExam", upstream_dir("WISE"))


def test_an_edited_template_is_refused_naming_the_piece_and_commit(tmp_path):
    folder = copy_of("WISE", tmp_path / "WISE")
    path = folder / "vllm_eval.py"
    path.write_text(path.read_text().replace("If there is serious doubt, return 0.", "If in doubt, return 1."))
    with pytest.raises(UpstreamError) as info:
        verified_source("WISE", folder, "vllm_eval.py", "build_evaluation_messages")
    assert "'build_evaluation_messages' differs from WISE at commit eb51174" in str(info.value)
    assert verified_source("WISE", folder, "vllm_eval.py", "extract_scores").startswith("def extract_scores")  # others still read
    path.write_text(path.read_text().replace("def extract_scores", "def read_scores"))
    with pytest.raises(UpstreamError, match="'extract_scores' not found"):
        verified_source("WISE", folder, "vllm_eval.py", "extract_scores")


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin:/usr/local/bin"})


def local_repository(tmp_path, bench: str, edit=None) -> tuple[str, str]:
    """A git repository holding the pinned files (optionally edited), committed; returns (file:// URL, commit)."""
    work = copy_of(bench, tmp_path / "work")
    if edit:
        edit(work)
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "pinned", cwd=work)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True, check=True).stdout.strip()
    bare = tmp_path / "repo.git"
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    return f"file://{bare}", commit


def test_fetch_clones_the_pinned_commit_and_checks_it(tmp_path, monkeypatch):
    url, commit = local_repository(tmp_path, "UniEval")
    monkeypatch.setitem(UPSTREAMS, "UniEval", Upstream("UniEval", url, commit, UPSTREAMS["UniEval"].pins))
    result = CliRunner().invoke(app, ["upstream", "fetch", "unieval"], env={"VISTAR_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, result.output
    dest = tmp_path / "home" / "upstream" / "UniEval"
    assert f"UniEval: {dest}" in result.output and (dest / "uni_eval.py").is_file()
    again = CliRunner().invoke(app, ["upstream", "check", "UniEval", str(dest)])
    assert again.exit_code == 0 and "matches upstream UniEval@" in again.output


def test_fetch_refuses_a_repository_whose_code_differs_from_the_pins(tmp_path, monkeypatch):
    def edit(work):
        path = work / "uni_eval.py"
        path.write_text(path.read_text().replace("if reply == '':", "if not reply:"))
    url, commit = local_repository(tmp_path, "UniEval", edit)
    monkeypatch.setitem(UPSTREAMS, "UniEval", Upstream("UniEval", url, commit, UPSTREAMS["UniEval"].pins))
    result = CliRunner().invoke(app, ["upstream", "fetch", "UniEval", "--dest", str(tmp_path / "checkout")])
    assert result.exit_code == 1 and "'check_answer' differs from UniEval" in result.output
    missing = CliRunner().invoke(app, ["upstream", "fetch", "nope"])
    assert missing.exit_code == 2 and "unknown benchmark 'nope'" in missing.output


def test_fetch_reports_a_git_failure(tmp_path, monkeypatch):
    monkeypatch.setitem(UPSTREAMS, "PhyBench", Upstream("PhyBench", f"file://{tmp_path}/absent.git", "0" * 40, {}))
    with pytest.raises(UpstreamError, match="git clone .* failed"):
        upstream_source.fetch("PhyBench", tmp_path / "dest")


@pytest.mark.slow
def test_score_with_upstream_templates_end_to_end(tmp_path):
    """The local judge answers the benchmark's own prompt; rows, summary and run.json name the template family."""
    folder = tmp_path / "images" / "modelA"
    folder.mkdir(parents=True)
    for name, rgb in {"1": WHITE, "641": BLACK}.items():
        Image.fromarray(solid(rgb)).save(folder / f"{name}.png")
    runner = CliRunner()
    args = ["score", str(tmp_path / "images"), "--suite", "wise-verified", "--data-dir", str(shared("WISE")),
            "--judge-model", "t"]
    with JudgeServer() as server:
        result = runner.invoke(app, [*args, "--out", str(tmp_path / "run"), "--judge-url", server.url,
                                     "--upstream", str(upstream_dir("WISE"))], env={"VISTAR_HOME": str(tmp_path / "home")})
        sent = server.requests
    assert result.exit_code == 0, result.output
    assert "judged with upstream WISE@eb51174" in result.output
    frame = read_scores(tmp_path / "run")
    assert dict(zip(frame.prompt_id, frame.score)) == {"1": 1.0, "641": 0.0}
    assert {json.loads(d)["template"] for d in frame.details} == {"upstream WISE@eb51174"}
    assert sent[0]["messages"][0]["content"][0]["text"].startswith("You are a professional text-to-image quality auditor")
    assert sent[0]["temperature"] == 0.0 and sent[0]["max_tokens"] == 500 and "seed" not in sent[0]
    summary = json.loads((tmp_path / "run" / "summary-wise-verified.json").read_text())
    assert summary["template_family"] == "upstream WISE@eb51174" and summary["modelA"]["missing_ids"] == 998
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["judge_templates"] == {"wise-verified": "upstream WISE@eb51174"}

    with JudgeServer() as server:  # vistar's own templates: labelled as not comparable
        result = runner.invoke(app, [*args, "--out", str(tmp_path / "own"), "--judge-url", server.url],
                               env={"VISTAR_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "own" / "summary-wise-verified.json").read_text())
    assert summary["template_family"] == "vistar-wise-verified-1: not comparable with published tables"


def test_score_refuses_an_edited_checkout_before_judging(tmp_path):
    folder = copy_of("WISE", tmp_path / "WISE")
    path = folder / "vllm_eval.py"
    path.write_text(path.read_text().replace("temperature\": 0.0", "temperature\": 0.7"))
    (tmp_path / "images" / "m").mkdir(parents=True)
    Image.fromarray(solid(WHITE)).save(tmp_path / "images" / "m" / "1.png")
    result = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--suite", "wise-verified", "--data-dir",
                                      str(shared("WISE")), "--out", str(tmp_path / "run"), "--upstream", str(folder)])
    assert result.exit_code == 2 and "'_chat_completion_via_vllm' differs from WISE at commit eb51174" in result.output


@pytest.mark.parametrize("suite,bench,images,expected", [
    ("wise-legacy", "WISE", {"1": WHITE, "701": BLACK}, {"1": (1.4 + 0.4 + 0.1) / 2, "701": 0.1 / 2}),
    ("unieval", "UniEval", {"1_0": WHITE}, None),
    ("phybench", "PhyBench", {"Gravity_0": WHITE, "Gravity_1": BLACK}, {"Gravity_0": 1.0, "Gravity_1": 0.0}),
])
@pytest.mark.slow
def test_the_local_judge_answers_every_benchmarks_own_prompt(tmp_path, suite, bench, images, expected):
    from tests.support.phybench_files import write_phybench
    from tests.support.suite_cli import run_suite

    data = write_phybench(tmp_path / "PhyBench") if bench == "PhyBench" else shared(bench)
    run_suite(tmp_path, suite, data, images, "--upstream", str(upstream_dir(bench)))
    frame = read_scores(tmp_path / "run")
    if expected is not None:
        main = frame[frame.metric != "phybench.scene"]
        assert dict(zip(main.prompt_id, main.score)) == pytest.approx(expected)
    summary = json.loads((tmp_path / "run" / f"summary-{suite}.json").read_text())
    assert summary["template_family"].startswith(f"upstream {bench}@")


def test_protocol_without_an_upstream_family_refuses_the_upstream_template(tmp_path, monkeypatch):
    """A protocol whose benchmark publishes no judge code declares no upstream family: `--suite NAME --upstream`
    exits 2 naming the protocol, and a prompt asking for the upstream template is an `error` row saying why,
    while the run's other prompt is scored."""
    from tests.support.toy_protocol import write_benchmark
    from vistar.engine import registry
    from vistar.prompts_dsl.parser import serialize_prompt

    monkeypatch.setitem(registry.PROTOCOLS, "toy-colours", "tests.support.toy_protocol:PROTOCOL")
    data, images = write_benchmark(tmp_path, {"1": "white", "2": "black"}, solid(WHITE))
    runner, env = CliRunner(), {"VISTAR_HOME": str(tmp_path / "home")}
    result = runner.invoke(app, ["score", str(images), "--suite", "toy-colours", "--data-dir", str(data),
                                 "--upstream", str(tmp_path), "--out", str(tmp_path / "refused")], env=env)
    assert result.exit_code == 2 and "'toy-colours' has no upstream family" in result.output

    prompts = [registry.protocol("toy-colours").load_items(data)[i].to_prompt() for i in (0, 1)]
    prompts[1].controls["template"] = "upstream"
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"id": p.id, "prompt": serialize_prompt(p)}) + "\n"
                                              for p in prompts))
    with JudgeServer() as server:
        result = runner.invoke(app, ["score", str(images), "--prompts", str(tmp_path / "p.jsonl"),
                                     "--data-dir", str(data), "--out", str(tmp_path / "run"), "--judge-url", server.url,
                                     "--judge-model", "t"], env=env)
    assert result.exit_code == 3, result.output   # partial: one error row
    rows = read_scores(tmp_path / "run").set_index("prompt_id")
    assert rows.loc["1", "status"] == "ok"
    assert rows.loc["2", "status"] == "error" and "declares no upstream family" in rows.loc["2", "error"]
