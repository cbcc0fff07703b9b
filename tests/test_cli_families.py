"""Exit codes of the command families other than `score`, `merge` and `dsl check` (tested beside them), and codes
case-insensitive in prompt files and `hwpq --angles` (docs/cli.md)."""
import pytest
from typer.testing import CliRunner

from tests.support import engine_plugins
from tests.support.run_inputs import png, prompts
from tests.support.scores_builder import row, write_run
from vistar.cli import app
from vistar.engine.store import read_scores


@pytest.fixture
def fake(monkeypatch):
    engine_plugins.install(monkeypatch)
    return engine_plugins


def invoke(*args, **kwargs):
    res = CliRunner().invoke(app, [str(a) for a in args], **kwargs)
    assert "Traceback" not in res.output, res.output
    return res


def test_report_exit_codes(tmp_path):
    run = write_run(tmp_path / "run", [row("A", "t", "TR", 0.5)])
    assert invoke("report", run, "--resamples", "100").exit_code == 0
    assert invoke("report", tmp_path, "--resamples", "100").exit_code == 2  # not a run directory
    assert invoke("report", run, "--resamples", "5").exit_code == 2         # below the option's minimum


def test_bench_usage_errors_exit_2(tmp_path):
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] x {text="x"}'])
    res = invoke("bench", "--prompts", p, "--batch-sizes", "1,two", "--n", "1", "--size", "32")
    assert res.exit_code == 2 and "error:" in res.output
    assert invoke("bench", "--prompts", tmp_path / "missing.vistar").exit_code == 2


def test_bench_refuses_a_gpu_the_machine_lacks_naming_what_was_found(tmp_path, monkeypatch):
    from vistar.runtime import device

    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] x {text="x"}'])
    monkeypatch.setattr(device, "cuda_devices", lambda: (0, "no CUDA device: torch 9.9 is a CPU-only build"))
    res = invoke("bench", "--prompts", p, "--device", "cuda", "--n", "1", "--size", "32", "--json", tmp_path / "b.json")
    assert res.exit_code == 2 and "--device cuda: no CUDA device: torch 9.9 is a CPU-only build" in res.output
    assert not (tmp_path / "b.json").exists()  # refused before any work
    monkeypatch.setattr(device, "cuda_devices", lambda: (1, "1 CUDA device found (cuda:0 X)"))
    res = invoke("bench", "--prompts", p, "--device", "cuda:1", "--n", "1", "--size", "32")
    assert res.exit_code == 2 and "--device cuda:1: 1 CUDA device found (cuda:0 X)" in res.output
    assert invoke("bench", "--prompts", p, "--device", "gpu").exit_code == 2


def test_bench_device_auto_runs_on_what_there_is_and_says_so(tmp_path, monkeypatch):
    import json

    from tests.support import fake_plugins
    from vistar.runtime import device

    fake_plugins.install(monkeypatch)
    monkeypatch.setattr(device, "cuda_devices", lambda: (0, "no CUDA device"))
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] x {text="x"}'])
    res = invoke("bench", "--prompts", p, "--device", "auto", "--n", "2", "--size", "32", "--batch-sizes", "1",
                 "--repeats", "1", "--json", tmp_path / "b.json")
    assert res.exit_code == 0, res.output
    assert res.output.startswith("device cpu (--device auto) · ")
    fingerprint = json.loads((tmp_path / "b.json").read_text())["fingerprint"]
    assert (fingerprint["device"], fingerprint["device_requested"]) == ("cpu", "auto")


def test_suite_exit_codes(tmp_path):
    assert invoke("suite", "show", "core", "--limit", "1").exit_code == 0
    assert invoke("suite", "show", "no-such-suite").exit_code == 2
    flagged = prompts(tmp_path / "p.vistar", ['a: [GD|TR] a poster that says "kill" {text="kill"}'])
    blocklist = tmp_path / "words.yaml"
    blocklist.write_text("categories: {violence: [kill]}\n")
    res = invoke("suite", "screen", flagged, "--blocklist", blocklist)
    assert res.exit_code == 1 and "violence" in res.output  # FINDINGS


def test_models_exit_codes(tmp_path):
    env = {"VISTAR_HOME": str(tmp_path), "HF_HOME": str(tmp_path / "hf")}
    assert invoke("models", "list", env=env).exit_code == 0
    assert invoke("models", "verify", env=env).exit_code == 0  # nothing present, nothing wrong
    assert invoke("models", "verify", "dpt-hybrid-midas", env=env).exit_code == 1  # asked for, and missing
    assert invoke("models", "fetch", "no-such-model", env=env).exit_code == 2


def test_hwpq_exit_codes(tmp_path):
    empty = tmp_path / "q"
    empty.mkdir()
    assert invoke("hwpq", "validate", empty).exit_code == 0  # no questionnaire, none with problems
    (empty / "bad.json").write_text("{not json")
    assert invoke("hwpq", "validate", empty).exit_code == 1
    p = prompts(tmp_path / "p.vistar", ["a: [IL|SF] a glass of water"])
    assert invoke("hwpq", "generate", p).exit_code == 2  # no judge configured
    res = invoke("hwpq", "generate", p, "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--angles", "XX")
    assert res.exit_code == 2 and "--angles: unknown angle code(s) XX" in res.output


def test_ontology_exit_codes(tmp_path):
    assert invoke("ontology", "show").exit_code == 0
    bad = tmp_path / "o.yaml"
    bad.write_text("mask: [not, a, mapping]\n")
    assert invoke("ontology", "show", "--ontology", bad).exit_code == 2


def test_role_and_angle_codes_in_prompt_files_are_case_insensitive(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [gd|tr] "A"'])
    check = invoke("dsl", "check", p)
    assert check.exit_code == 0 and "1 prompts parsed, 0 errors" in check.output
    res = invoke("score", tmp_path / "imgs", "--prompts", p, "--out", tmp_path / "run")
    assert res.exit_code == 0, res.output
    rows = read_scores(tmp_path / "run")
    assert set(zip(rows.role, rows.angle)) == {("GD", "TR")} and set(rows.status) == {"ok"}


def test_a_prompt_with_uppercase_codes_keeps_its_rows(tmp_path, fake):
    """Rows of a successful run do not change: `[GD|TR]` scores and keys are what they were, and a rerun of the
    same prompt written `[gd|tr]` is the same prompt (nothing re-scored)."""
    png(tmp_path / "imgs" / "m" / "a.png")
    upper = prompts(tmp_path / "upper.vistar", ['a: [GD|TR] "A"'])
    assert invoke("score", tmp_path / "imgs", "--prompts", upper, "--out", tmp_path / "run").exit_code == 0
    before = read_scores(tmp_path / "run").sort_values("metric").reset_index(drop=True)
    lower = prompts(tmp_path / "lower.vistar", ['a: [gd|tr] "A"'])
    res = invoke("score", tmp_path / "imgs", "--prompts", lower, "--out", tmp_path / "run")
    assert res.exit_code == 0 and "scored 0 rows (nothing new); 2 already in" in res.output
    after = read_scores(tmp_path / "run").sort_values("metric").reset_index(drop=True)
    assert after[["key", "score", "role", "angle"]].equals(before[["key", "score", "role", "angle"]])


def test_bad_output_folders_and_files_exit_2_not_a_traceback(tmp_path, monkeypatch):
    from vistar.runtime import device

    missing = tmp_path / "no-such-folder"
    assert invoke("suite", "export", "core", "--out", missing / "x.jsonl").exit_code == 2
    for text in ("foo: [a\n", "categories: [x]\n"):     # not YAML; not `categories: {name: [term, ...]}`
        (tmp_path / "bad.yaml").write_text(text)
        res = invoke("suite", "screen", "core", "--blocklist", tmp_path / "bad.yaml")
        assert res.exit_code == 2 and "bad.yaml" in res.output
    monkeypatch.setattr(device, "cuda_devices", lambda: (0, "no CUDA device"))
    for asked in ("cuda", "banana"):
        res = invoke("gc", "fit-padim", tmp_path, "--out", tmp_path / "s.npz", "--device", asked)
        assert res.exit_code == 2 and "--device" in res.output and asked in res.output
    res = invoke("gc", "fit-padim", tmp_path, "--out", missing / "s.npz")
    assert res.exit_code == 2 and "does not exist" in res.output
    assert invoke("validate", "--seed", "-1").exit_code == 2


def test_bench_refuses_batch_sizes_below_1_and_a_missing_json_folder_before_running(tmp_path, fake):
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] x {text="x"}'])
    for sizes in ("0", "-2", "1,0"):
        res = invoke("bench", "--prompts", p, "--batch-sizes", sizes, "--n", "1", "--size", "32")
        assert res.exit_code == 2 and "--batch-sizes" in res.output
    res = invoke("bench", "--prompts", p, "--n", "1", "--size", "32", "--json", tmp_path / "nodir" / "x.json")
    assert res.exit_code == 2 and "does not exist" in res.output and "stage" not in res.output   # no table: nothing ran
