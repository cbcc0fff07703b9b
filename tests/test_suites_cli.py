"""`vistar suite list | show | export | stats | screen`, and the sibling-benchmark suites when their data exists."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vistar.cli import app
from vistar.prompts_dsl import read_prompts
from vistar.suites import load_builtin

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
run = CliRunner().invoke


def test_list_names_the_shipped_suites_with_counts():
    result = run(app, ["suite", "list"])
    assert result.exit_code == 0, result.output
    for name, count in (("core", len(load_builtin("core"))), ("hard", len(load_builtin("hard")))):
        assert name in result.output and str(count) in result.output


def test_show_prints_version_and_prompts():
    result = run(app, ["suite", "show", "hard", "--limit", "3"])
    assert result.exit_code == 0, result.output
    assert "1.0" in result.output and "hard-GD-TR-001" in result.output and "more (--limit 0" in result.output


def test_export_txt_gives_ids_and_bare_cores():
    result = run(app, ["suite", "export", "core", "--format", "txt"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    prompts = load_builtin("core")
    assert len(lines) == len(prompts)
    for line, prompt in zip(lines, prompts):
        pid, text = line.split("\t")
        assert pid == prompt.id and text == prompt.core
        assert not text.startswith("[") and "{" not in text and "set=" not in text


def test_export_jsonl_is_generation_input_and_a_valid_prompt_file(tmp_path):
    out = tmp_path / "full.jsonl"
    result = run(app, ["suite", "export", "full", "--format", "jsonl", "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    prompts = load_builtin("full")
    assert [r["id"] for r in records] == [p.id for p in prompts]
    assert [r["text"] for r in records] == [p.core for p in prompts]
    back = read_prompts(out)  # the same file scores: `vistar score IMAGES --prompts full.jsonl`
    assert back.errors == []
    assert [p.fingerprint for p in back.prompts] == [p.fingerprint for p in prompts]


def test_export_vistar_with_set_filter_round_trips(tmp_path):
    out = tmp_path / "hard.vistar"
    assert run(app, ["suite", "export", "full", "--format", "vistar", "--set", "hard", "--out", str(out)]).exit_code == 0
    back = read_prompts(out)
    assert back.errors == [] and [p.id for p in back.prompts] == [p.id for p in load_builtin("hard")]


def test_export_rejects_unknown_format_and_suite():
    assert run(app, ["suite", "export", "core", "--format", "csv"]).exit_code == 2
    result = run(app, ["suite", "export", "no-such-suite"])
    assert result.exit_code == 2 and "unknown suite" in result.output


def test_stats_json_counts():
    result = run(app, ["suite", "stats", "full", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["prompts"] == len(load_builtin("full"))
    assert data["by_set"] == {"core": len(load_builtin("core")), "hard": len(load_builtin("hard"))}
    assert len(data["by_pair"]) == 28 and min(data["by_pair"].values()) >= 10
    assert data["yule"]["k"] > 0 and data["yule"]["i"] > 0
    assert data["near_duplicates"] == [] and data["wordlist_flags"] == []


def test_stats_and_screen_on_a_user_file_with_a_bad_line(tmp_path):
    f = tmp_path / "mine.vistar"
    f.write_text('ok-1: [GD|GC] A red cube\nbroken: [GD|GC A\nbad-1: [GD|TR] A gory poster {text="HI"}\n', encoding="utf-8")
    stats = run(app, ["suite", "stats", str(f), "--json"])
    assert stats.exit_code == 0 and json.loads(stats.stdout)["prompts"] == 2
    screen = run(app, ["suite", "screen", str(f)])
    assert screen.exit_code == 1
    assert "bad-1: violence: 'gory'" in screen.output
    assert "skipped:" in screen.output  # the broken line is reported, the rest screened


def test_screen_passes_shipped_suites_and_reports_missing_classifier_weights(tmp_path, monkeypatch):
    assert run(app, ["suite", "screen", "full"]).exit_code == 0
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path))
    result = run(app, ["suite", "screen", "core", "--classifier", "detoxify", "--model-path", f"detoxify-original={tmp_path / 'absent.ckpt'}"])
    assert result.exit_code == 2 and "detoxify-original" in result.output


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"sibling benchmark data not found at {SHARED_DATA} (WISE/GenExam/UniEval)")
def test_protocol_suites_list_and_export_from_shared_data(tmp_path):
    pytest.importorskip("vistar.vlm.protocols", reason="judge layer (vistar.vlm.protocols) not installed")
    from vistar.suites.loader import load_suite
    from vistar.suites.protocols import protocols

    listing = run(app, ["suite", "list", "--data-dir", str(SHARED_DATA)])
    assert listing.exit_code == 0, listing.output
    available = []
    for name in protocols():
        assert name in listing.output
        sub = protocols()[name].data_subdir
        data_files = (SHARED_DATA / sub).rglob("*.json*") if sub else ()
        if any("upstream" not in f.parts for f in data_files):  # a folder holding only the upstream code has no items
            available.append(name)
    assert available, "no sibling benchmark folder under the shared data root"
    for name in available:
        out = tmp_path / f"{name}.jsonl"
        result = run(app, ["suite", "export", name, "--data-dir", str(SHARED_DATA), "--out", str(out)])
        assert result.exit_code == 0, result.output
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        suite = load_suite(name, SHARED_DATA)
        assert len(records) == len(suite.prompts) > 0
        assert all(r["text"] and r["id"] and '{protocol="' + name + '"' in r["prompt"] for r in records)


def test_protocol_suite_with_a_missing_data_folder_fails_clearly(tmp_path):
    pytest.importorskip("vistar.vlm.protocols", reason="judge layer (vistar.vlm.protocols) not installed")
    from vistar.suites.protocols import protocols

    name = next(iter(protocols()))
    result = run(app, ["suite", "export", name, "--data-dir", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "--data-dir" in result.output


@pytest.mark.slow
def test_exported_ids_lay_out_images_that_score_against_the_same_file(tmp_path):
    """export -> IMAGES/<model>/<prompt_id>.png -> `vistar score --prompts` on the exported file itself."""
    from PIL import Image, ImageDraw

    from vistar.engine.store import read_scores

    exported = tmp_path / "core.jsonl"
    assert run(app, ["suite", "export", "core", "--out", str(exported)]).exit_code == 0
    records = {r["id"]: r for r in map(json.loads, exported.read_text(encoding="utf-8").splitlines())}
    model_dir = tmp_path / "IMAGES" / "toy-model"
    model_dir.mkdir(parents=True)
    rendered = {"core-GD-TR-001": "NIGHT TRAIN LIVE", "core-ED-TR-004": "nothing here"}  # right text / wrong text
    for pid, text in rendered.items():
        assert pid in records
        image = Image.new("RGB", (640, 256), "white")
        ImageDraw.Draw(image).text((20, 100), text, fill="black", font_size=48)
        image.save(model_dir / f"{pid}.png")
    result = run(app, ["score", str(tmp_path / "IMAGES"), "--prompts", str(exported), "--angles", "TR", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    scores = read_scores(tmp_path / "run").set_index("prompt_id")
    assert set(scores.index) == set(rendered) and set(scores["set"]) == {"core"}
    assert scores.loc["core-GD-TR-001", "score"] > 0.9 > scores.loc["core-ED-TR-004", "score"]


def test_a_protocol_that_does_not_import_leaves_the_other_protocol_suites_usable(tmp_path, monkeypatch):
    from vistar.engine import registry

    monkeypatch.setattr(registry, "PROTOCOLS", {**registry.PROTOCOLS, "toy-colours": "vistar_absent_plugin:PROTOCOL"})
    listing = run(app, ["suite", "list", "--data-dir", str(SHARED_DATA)])
    assert listing.exit_code == 0 and "genexam" in listing.output and "toy-colours" not in listing.output
    out = tmp_path / "genexam.jsonl"
    result = run(app, ["suite", "export", "genexam", "--data-dir", str(SHARED_DATA), "--out", str(out)])
    assert result.exit_code == 0 and out.read_text(encoding="utf-8").strip(), result.output
