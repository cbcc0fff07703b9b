"""`run_score` end to end with a fake stage: mapping, problems, resume, stale rows, misbehaving metrics, lock."""
import fcntl
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.support import engine_plugins
from tests.support.run_inputs import png, prompts
from vistar.cli import app
from vistar.engine.runner import RunLocked, ScoreConfig, run_score
from vistar.engine.store import read_scores


def problems(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "problems.jsonl").read_text().splitlines()]


@pytest.fixture
def fake(monkeypatch):
    engine_plugins.install(monkeypatch)
    return engine_plugins


def test_layout_mapping_samples_and_reported_leftovers(tmp_path, fake):
    imgs = tmp_path / "imgs"
    png(imgs / "m1" / "p1.png", (255, 0, 0))
    png(imgs / "m1" / "p1_1.png", (0, 255, 0))
    png(imgs / "m1" / "p1_2.jpg", (0, 0, 255))
    png(imgs / "m1" / "p_9.png")          # exact id 'p_9' wins over 'p' sample 9
    png(imgs / "m2" / "p2.png")
    png(imgs / "m2" / "ghost.png")        # no such prompt
    png(imgs / "loose.png")               # not inside a model folder
    (imgs / "m2" / "notes.txt").write_text("ignored: not an image extension")
    p = prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"', 'p2: [GD|TR] "B"', 'p3: [GD|TR] "C"', 'p_9: [GD|TR] "D"'])
    summary = run_score(ScoreConfig(imgs, p, tmp_path / "run"))
    df = read_scores(tmp_path / "run")
    got = sorted(set(zip(df.image, df.model, df.prompt_id, df["sample"])))
    assert got == [("m1/p1.png", "m1", "p1", 0), ("m1/p1_1.png", "m1", "p1", 1), ("m1/p1_2.jpg", "m1", "p1", 2),
                   ("m1/p_9.png", "m1", "p_9", 0), ("m2/p2.png", "m2", "p2", 0)]
    assert len(df) == 10 and set(df.metric) == {"TR", "TR.odd"} and (df.status == "ok").all()
    red = df[(df.image == "m1/p1.png") & (df.metric == "TR")].iloc[0]
    assert red.score == pytest.approx(255 / 3 / 255) and json.loads(red.details)["corner"] == [255, 0, 0]
    found = {(p["kind"], p["item"]) for p in problems(tmp_path / "run")}
    assert {("unmatched_image", "m2/ghost.png"), ("unmatched_image", "loose.png"), ("prompt_without_image", "p3")} <= found
    assert summary.rows_by_status == {"ok": 10}


def test_manifest_csv(tmp_path, fake):
    flat = tmp_path / "flat"
    png(flat / "x.png", (200, 200, 200))
    png(flat / "y.png", (0, 0, 0))
    png(flat / "z.png")
    (tmp_path / "m.csv").write_text("image,prompt_id,model\nx.png,p1,alpha\ny.png,p1,alpha\nz.png,nope,alpha\n"
                                    "missing.png,p2,beta\n,p2,beta\n")
    p = prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"', 'p2: [GD|TR] "B"'])
    run_score(ScoreConfig(flat, p, tmp_path / "run", manifest=tmp_path / "m.csv"))
    df = read_scores(tmp_path / "run")
    tr = df[df.metric == "TR"].set_index("image")
    assert list(tr.index) == ["x.png", "y.png", "missing.png"]   # read order: model, prompt id, sample
    assert tr.loc["x.png", "sample"] == 0 and tr.loc["y.png", "sample"] == 1  # samples numbered in manifest order
    assert tr.loc["x.png", "score"] == pytest.approx(200 / 255) and tr.loc["x.png", "model"] == "alpha"
    assert tr.loc["missing.png", "status"] == "error" and "cannot read file" in tr.loc["missing.png", "error"]
    found = {p["kind"]: p for p in problems(tmp_path / "run") if p["item"] == "z.png"}
    assert "no prompt with id 'nope'" in found["unmatched_image"]["message"]
    assert any("needs image, prompt_id and model" in p["message"] for p in problems(tmp_path / "run"))


def test_invalid_prompts_are_reported_for_their_images(tmp_path, fake):
    imgs = tmp_path / "imgs"
    for pid in ("ok", "badrole", "noquote", "unparsable", "dup"):
        png(imgs / "m" / f"{pid}.png")
    p = prompts(tmp_path / "p.vistar", ['ok: [GD|TR] "A"', 'badrole: [XX|TR] "A"', "noquote: [GD|TR] no text here",
                                         'unparsable: [GD|TR] "A" {text=}', 'dup: [GD|TR] "A"', 'dup: [GD|TR] "B"'])
    run_score(ScoreConfig(imgs, p, tmp_path / "run"))
    df = read_scores(tmp_path / "run").set_index(["prompt_id", "metric"])
    assert df.loc[("ok", "TR"), "status"] == "ok"
    for pid, says in (("badrole", "unknown role code 'XX'"), ("noquote", "field 'text'"), ("dup", "duplicate id 'dup'")):
        row = df.loc[(pid, "TR")]
        assert row.status == "error" and pd.isna(row.score) and f"invalid prompt '{pid}'" in row.error and says in row.error
    assert "unparsable" not in df.index.get_level_values(0)
    assert f"invalid prompt 'badrole': {p}:2: field 'role'" in df.loc[("badrole", "TR"), "error"]  # names file and line
    assert f"{p}:6: duplicate id 'dup'" in df.loc[("dup", "TR"), "error"]
    kinds = {(p["kind"], p["item"]) for p in problems(tmp_path / "run")}
    assert ("image_of_invalid_prompt", "m/unparsable.png") in kinds
    unparsable = next(q for q in problems(tmp_path / "run") if q["item"] == "m/unparsable.png")
    assert f"{p}:4: unexpected '}}'" in unparsable["message"]
    assert not any(k == "unmatched_image" for k, _ in kinds)


def test_invalid_prompt_rows_are_not_rescored_for_another_path_or_a_moved_line(tmp_path, fake, monkeypatch):
    """The error text names FILE:LINE; the row key hashes the reason without it."""
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    for pid in ("ok", "badrole", "dup"):
        png(imgs / "m" / f"{pid}.png")
    lines = ['ok: [GD|TR] "A"', 'badrole: [XX|TR] "A"', 'dup: [GD|TR] "A"', 'dup: [GD|TR] "B"']
    monkeypatch.chdir(tmp_path)
    prompts(tmp_path / "p.vistar", lines)
    first = run_score(ScoreConfig(imgs, Path("p.vistar"), run))
    keys = read_scores(run).set_index(["prompt_id", "metric"])["key"]
    assert first.scored == 6 and first.reused == 0
    absolute = run_score(ScoreConfig(imgs, (tmp_path / "p.vistar").resolve(), run))
    assert (absolute.scored, absolute.reused) == (0, 6)
    prompts(tmp_path / "p.vistar", ["# a comment above moves every line", ""] + lines)
    moved = run_score(ScoreConfig(imgs, Path("p.vistar"), run))
    assert (moved.scored, moved.reused) == (0, 6)
    df = read_scores(run).set_index(["prompt_id", "metric"])
    assert df["key"].equals(keys)
    assert "invalid prompt 'badrole': p.vistar:2: field 'role'" in df.loc[("badrole", "TR"), "error"]  # location kept
    assert "p.vistar:4: duplicate id 'dup' (first at p.vistar:3)" in df.loc[("dup", "TR"), "error"]
    prompts(tmp_path / "p.vistar", ['ok: [GD|TR] "A"', 'badrole: [YY|TR] "A"', 'dup: [GD|TR] "A"', 'dup: [GD|TR] "B"'])
    edited = run_score(ScoreConfig(imgs, Path("p.vistar"), run))   # another reason is another row
    assert (edited.scored, edited.reused) == (2, 4)


def test_misbehaving_metrics_become_error_rows(tmp_path, fake):
    imgs = tmp_path / "imgs"
    modes = ["nan", "raw_nan", "inf", "details", "raise", "skip", "not_a_result", "fine"]
    lines = []
    for mode in modes:
        png(imgs / "m" / f"{mode}.png", (51, 51, 51))
        lines.append(f'{mode}: [GD|TR] "A" {{odd="{mode}"}}')
    png(imgs / "m" / "stagefail.png")
    lines.append('stagefail: [GD|TR] "A" {stage="fail"}')
    run_score(ScoreConfig(imgs, prompts(tmp_path / "p.vistar", lines), tmp_path / "run"))
    df = read_scores(tmp_path / "run")
    odd = df[df.metric == "TR.odd"].set_index("prompt_id")
    for mode in ("nan", "raw_nan", "inf", "raise", "not_a_result"):
        assert odd.loc[mode, "status"] == "error" and pd.isna(odd.loc[mode, "score"]), mode
    assert "non-finite" in odd.loc["nan", "error"] and "non-finite" in odd.loc["inf", "error"]
    assert "RuntimeError: metric failed on purpose" in odd.loc["raise", "error"]
    assert odd.loc["skip", "status"] == "skipped" and odd.loc["skip", "error"] == "nothing to judge"
    details = json.loads(odd.loc["details", "details"])  # strict JSON despite numpy, NaN, tuple keys, a cycle
    assert odd.loc["details", "score"] == 0.25 and details["arr"] == [0, 1, 2] and details["(1, 2)"] == "nan"
    assert details["me"] == "<cycle>"
    assert odd.loc["fine", "score"] == pytest.approx(0.8)
    assert df[df.status == "ok"].score.between(0, 1).all()  # nothing poisons a mean
    failed = df[df.prompt_id == "stagefail"]
    assert (failed.status == "error").all() and failed.error.str.contains("stage failed on purpose").all()


def test_resume_scores_only_what_is_missing(tmp_path, fake):
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    png(imgs / "m" / "a.png")
    png(imgs / "m" / "b.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B" {odd="skip"}', 'c: [GD|TR] "C" {odd="raise"}'])
    first = run_score(ScoreConfig(imgs, p, run))
    assert first.scored == 4 and first.reused == 0
    png(imgs / "m" / "c.png")
    fake.CALLS.clear()
    second = run_score(ScoreConfig(imgs, p, run))
    # a: both reused; b: TR reused, TR.odd skipped -> retried; c: new image, both metrics
    assert (second.reused, second.scored) == (3, 3) and sum(fake.CALLS) == 2
    third = run_score(ScoreConfig(imgs, p, run))
    assert (third.reused, third.scored) == (5, 1)  # c's TR.odd error is reused, b's skip retried again
    fourth = run_score(ScoreConfig(imgs, p, run, retry_errors=True))
    assert (fourth.reused, fourth.scored) == (4, 2)
    df = read_scores(run)
    assert len(df) == 6 and not df.duplicated(["image", "metric"]).any()
    raw = pd.read_parquet(run / "scores.parquet")  # what any reader sees: no duplicates either
    assert len(raw) == 6 and not raw.key.duplicated().any()


def test_changed_inputs_replace_their_rows(tmp_path, fake, monkeypatch):
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    png(imgs / "m" / "a.png", (0, 0, 0))
    png(imgs / "m" / "b.png", (0, 0, 0))
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B"'])
    run_score(ScoreConfig(imgs, p, run, angles=["TR"]))
    png(imgs / "m" / "a.png", (255, 255, 255))                      # new image bytes
    prompts(p, ['a: [GD|TR] "A"', 'b: [GD|TR] "B" {odd="nan"}'])   # edited prompt
    again = run_score(ScoreConfig(imgs, p, run))
    assert (again.reused, again.scored) == (0, 4)  # a: new bytes; b: new prompt fingerprint
    engine_plugins.install(monkeypatch, {**engine_plugins.METRICS, "TR": "tests.support.engine_plugins:METRIC_MEAN_V2"})
    bumped = run_score(ScoreConfig(imgs, p, run))                    # metric version bump: TR re-scored
    assert (bumped.reused, bumped.scored) == (2, 2)
    df = read_scores(run).set_index(["image", "metric"])
    assert len(df) == 4 and df.loc[("m/a.png", "TR"), "score"] == 1.0 and df.loc[("m/a.png", "TR"), "metric_version"] == "2"
    assert df.loc[("m/b.png", "TR.odd"), "status"] == "error"
    assert len(pd.read_parquet(run / "scores.parquet")) == 4


def test_unavailable_metric_is_skipped_and_retried(tmp_path, fake, monkeypatch):
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    png(imgs / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    engine_plugins.install(monkeypatch, {"TR": "tests.no_such_module:METRIC"})
    run_score(ScoreConfig(imgs, p, run))
    (row,) = read_scores(run).itertuples()
    assert row.status == "skipped" and "metric TR unavailable" in row.error and "no_such_module" in row.error
    assert any(p["kind"] == "metric_unavailable" for p in problems(run))
    engine_plugins.install(monkeypatch)
    run_score(ScoreConfig(imgs, p, run))
    df = read_scores(run)
    assert len(df) == 2 and (df.status == "ok").all()


def test_unknown_angle_filter_is_refused(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    with pytest.raises(ValueError, match="unknown angle code"):
        run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "run", angles=["XYZ"]))
    res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "r"),
                                   "--angles", "XYZ"])
    assert res.exit_code == 2 and "unknown angle code" in res.output
    res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "r"),
                                   "--angles", "TR,"])  # a trailing comma is not an empty angle code
    assert res.exit_code == 0 and "scored 2 rows" in res.output, res.output


def test_second_concurrent_run_is_refused(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    run = tmp_path / "run"
    run.mkdir()
    with open(run / ".lock", "a+") as held:  # what a running `vistar score` holds: the lock, and its pid inside
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write(str(os.getpid()))
        held.flush()
        with pytest.raises(RunLocked, match=rf"another `vistar score` \(pid {os.getpid()}\)"):
            run_score(ScoreConfig(tmp_path / "imgs", p, run))
        res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(run)])
        # the message is never hard-wrapped, so the match holds at any terminal width (CI also runs COLUMNS=60)
        assert res.exit_code == 2 and f"another `vistar score` (pid {os.getpid()})" in res.output
    assert run_score(ScoreConfig(tmp_path / "imgs", p, run)).scored == 2  # free again once released


def test_cli_score_prints_summary_and_writes_run_json(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B"', 'c: [GD|TR] x {text=}'])
    res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "run"),
                                   "--batch-size", "3"])
    assert res.exit_code == 3, res.output  # PARTIAL: prompt c does not parse
    assert res.output.strip().splitlines()[-1] == "partial: 0 error rows, 1 invalid prompt (rows: 2 ok); exit 3"
    assert "scored 2 rows (2 ok)" in res.output and "prompt_without_image" in res.output
    assert "c: [GD|TR] x {text=}" in res.output  # problem excerpts are printed verbatim, not eaten as markup
    assert "prompt_without_image: b: no image for this prompt" in res.output  # which prompt, not just the kind
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["status"] == "complete" and meta["metric_versions"] == {"TR": "1", "TR.odd": "1"}
    assert meta["stage_versions"] == {"fake_stats": "1"} and meta["batch_size"] == 3
    assert {"command", "versions", "hardware", "ontology_hash", "models", "prompts_sha256", "counts"} <= set(meta)


def test_ontology_parameters_are_part_of_the_key(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    run = tmp_path / "run"
    run_score(ScoreConfig(tmp_path / "imgs", p, run))
    (tmp_path / "metric.yaml").write_text("metrics:\n  TR:\n    params:\n      w_char: 0.9\n")
    changed = run_score(ScoreConfig(tmp_path / "imgs", p, run, ontology=tmp_path / "metric.yaml"))
    assert (changed.reused, changed.scored) == (1, 1)  # TR re-scored, TR.odd untouched
    (tmp_path / "stage.yaml").write_text("features:\n  fake_stats:\n    anything: 1\n")
    staged = run_score(ScoreConfig(tmp_path / "imgs", p, run, ontology=tmp_path / "stage.yaml"))
    assert (staged.reused, staged.scored) == (0, 2)  # both metrics depend on the stage whose parameters changed
    assert len(read_scores(run)) == 2


def test_manifest_explicit_samples_bad_rows_and_one_image_for_two_prompts(tmp_path, fake):
    png(tmp_path / "flat" / "x.png", (200, 200, 200))
    png(tmp_path / "flat" / "y.png", (0, 0, 0))
    (tmp_path / "m.csv").write_text("image,prompt_id,model,sample\nx.png,p1,alpha,3\nx.png,p2,alpha,\ny.png,p1,alpha,two\n"
                                    "x.png,p1,alpha,3\n")
    p = prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"', 'p2: [GD|TR] "B"'])
    run_score(ScoreConfig(tmp_path / "flat", p, tmp_path / "run", manifest=tmp_path / "m.csv"))
    tr = read_scores(tmp_path / "run").query("metric == 'TR'").set_index("prompt_id")
    assert tr.loc["p1", "sample"] == 3 and tr.loc["p2", "sample"] == 0 and (tr.image == "x.png").all()
    messages = {p["item"]: p["message"] for p in problems(tmp_path / "run") if p["kind"] == "unmatched_image"}
    assert "sample must be an integer from 0 to 2147483647, not 'two'" in messages["y.png"]
    assert "listed twice" in messages["x.png"]


def test_an_edited_angle_replaces_the_rows_of_the_old_angle(tmp_path, fake):
    imgs, run = tmp_path / "imgs", tmp_path / "run"
    png(imgs / "m" / "a.png")
    png(imgs / "m" / "b.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B"'])
    run_score(ScoreConfig(imgs, p, run))
    prompts(p, ['a: [ED|LI] a lamp lights a ball {light="left"}', 'b: [GD|TR] "B"'])
    again = run_score(ScoreConfig(imgs, p, run))
    assert (again.reused, again.scored) == (2, 1)
    df = read_scores(run)
    assert list(df[df.prompt_id == "a"].metric) == ["LI"]  # the TR rows answered a prompt that is gone
    assert len(df) == 3 and len(pd.read_parquet(run / "scores.parquet")) == 3


def test_odd_file_names_links_and_formats_get_rows_or_problems(tmp_path, fake):
    imgs = tmp_path / "imgs"
    png(imgs / "m" / "a.png")
    png(imgs / "m" / "a\udcff.png")         # a name that is not UTF-8 (byte 0xFF)
    png(imgs / "m\udce9" / "a.png")          # a model folder named in Latin-1
    (imgs / "m" / "b.png").symlink_to(tmp_path / "gone.png")  # dangling link
    (imgs / "m" / "c.heic").write_bytes(b"\x00\x00\x00\x18ftypheic" + bytes(8))
    png(imgs / "m" / "a_99999999999.png")    # a sample number the store cannot hold
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B"', 'c: [GD|TR] "C"'])
    run_score(ScoreConfig(imgs, p, tmp_path / "run"))
    tr = read_scores(tmp_path / "run").query("metric == 'TR'").set_index("image")
    assert sorted(tr.index) == ["m/a.png", "m/b.png", "m/c.heic", "m\\xe9/a.png"]
    assert tr.loc["m\\xe9/a.png", "status"] == "ok" and tr.loc["m\\xe9/a.png", "model"] == "m\\xe9"
    assert tr.loc["m/b.png", "status"] == "error" and "cannot read file" in tr.loc["m/b.png", "error"]
    assert tr.loc["m/c.heic", "status"] == "error" and "cannot decode .heic files" in tr.loc["m/c.heic", "error"]
    found = {q["item"]: q["message"] for q in problems(tmp_path / "run") if q["kind"] == "unmatched_image"}
    assert found == {"m/a\\xff.png": "no prompt with id 'a\\xff'",
                     "m/a_99999999999.png": "sample 99999999999 is too large (at most 2147483647)"}


def test_manifest_header_case_blank_lines_and_oversized_samples(tmp_path, fake):
    png(tmp_path / "flat" / "x.png")
    png(tmp_path / "flat" / "y.png")
    m = tmp_path / "m.csv"
    m.write_text(" Image , Prompt_ID,MODEL,Sample\n\nx.png,p1,alpha,\ny.png,p1,alpha,99999999999\n")
    p = prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"'])
    run_score(ScoreConfig(tmp_path / "flat", p, tmp_path / "run", manifest=m))
    assert list(read_scores(tmp_path / "run").query("metric == 'TR'").image) == ["x.png"]
    messages = {q["item"]: q["message"] for q in problems(tmp_path / "run") if q["kind"] == "unmatched_image"}
    assert messages["y.png"] == f"{m}:4: sample must be an integer from 0 to 2147483647, not '99999999999'"
    m.write_bytes("image,prompt_id,model\nx.png,p1,Andr\xe9\n".encode("cp1252"))  # a spreadsheet's export
    with pytest.raises(ValueError, match=f"{m}:2: byte 0xE9 is not UTF-8 text"):
        run_score(ScoreConfig(tmp_path / "flat", p, tmp_path / "run", manifest=m))


def test_a_prompt_line_that_is_not_utf8_costs_only_its_images(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    png(tmp_path / "imgs" / "m" / "b.png")
    p = tmp_path / "p.vistar"
    p.write_bytes('a: [GD|TR] "Caf\xe9"\nb: [GD|TR] "B"\n'.encode("latin-1"))
    run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "run"))
    assert set(read_scores(tmp_path / "run").prompt_id) == {"b"}
    found = {(q["kind"], q["item"]): q["message"] for q in problems(tmp_path / "run")}
    assert "byte 0xE9 is not UTF-8" in found[("image_of_invalid_prompt", "m/a.png")]
    assert f"{p}:1" in found[("image_of_invalid_prompt", "m/a.png")]


def test_out_that_is_a_file_or_cannot_be_created_is_a_clear_refusal(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png")
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    (tmp_path / "file").write_text("x")
    for out in (tmp_path / "file", tmp_path / "file" / "run"):
        res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(out)])
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        said = " ".join(res.output.replace("│", " ").split())  # typer draws a box around its message
        assert "is a file" in said or "Not a directory" in said, said


def test_an_images_folder_and_prompt_file_named_in_another_encoding(tmp_path, fake):
    imgs, run = tmp_path / "imgs\udce9", tmp_path / "run"  # Latin-1 'é' in the names: not UTF-8
    png(imgs / "m" / "a.png")
    png(imgs / "m" / "bad.png")
    (imgs / "m" / "gone.png").symlink_to(tmp_path / "nowhere.png")
    p = prompts(tmp_path / "p\udce9.vistar", ['a: [GD|TR] "A"', 'bad: [XX|TR] "B"', 'gone: [GD|TR] "C"'])
    run_score(ScoreConfig(imgs, p, run))
    tr = read_scores(run).query("metric == 'TR'").set_index("prompt_id")
    assert tr.loc["a", "status"] == "ok"
    assert "p\\udce9.vistar:2: field 'role'" in tr.loc["bad", "error"]  # stored as an escape, not a crash
    assert "imgs\\udce9" in tr.loc["gone", "error"]
    assert any(f"{p}:2" in q["message"] for q in problems(run))  # problems.jsonl reads back the very name
    assert run_score(ScoreConfig(imgs, p, run)).reused == 6


def test_a_model_missing_images_or_an_empty_model_folder_is_reported(tmp_path, fake):
    imgs = tmp_path / "imgs"
    for pid in ("a", "b", "c"):
        png(imgs / "full" / f"{pid}.png")
    png(imgs / "half" / "a.png")
    (imgs / "empty").mkdir()
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"', 'b: [GD|TR] "B"', 'c: [GD|TR] "C"', 'd: [GD|TR] "D"'])
    run_score(ScoreConfig(imgs, p, imgs / "run"))  # a run folder inside IMAGES is not a model
    found = {q["item"]: q["message"] for q in problems(imgs / "run") if q["kind"] == "model_missing_images"}
    assert found == {"half": "no image for 2 of the 3 prompts some model has an image for: b, c",
                     "empty": "no image for 3 of the 3 prompts some model has an image for (an empty folder, or no file "
                              "matches a prompt): a, b, c"}  # d has no image anywhere: prompt_without_image says so


def test_an_image_refused_for_its_size_says_how_to_score_it(tmp_path, fake):
    png(tmp_path / "imgs" / "m" / "a.png", size=(64, 64))
    p = prompts(tmp_path / "p.vistar", ['a: [GD|TR] "A"'])
    run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "run", max_pixels=1000))
    (error,) = set(read_scores(tmp_path / "run").error)
    assert error.endswith("score into a new --out with a larger --max-pixels")
    assert run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "run", max_pixels=1000)).reused == 2
    # max_pixels is not in the key but changes how a large JPEG is decoded: a resume with another value is refused
    with pytest.raises(ValueError, match="was scored with --max-pixels 1000; this run has --max-pixels 64000000"):
        run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "run", retry_errors=True))
    assert set(read_scores(tmp_path / "run").error) == {error}   # nothing was written
    assert run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "bigger")).rows_by_status == {"ok": 2}
    res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and "--max-pixels 1000" in res.output and "--max-pixels 64000000" in res.output
    res = CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "r"),
                                   "--max-pixels", "-5"])
    assert res.exit_code == 2 and "--max-pixels" in res.output


def test_a_stage_parameter_value_the_stage_refuses_stops_the_run_before_any_row(tmp_path):
    """`features.ocr.space_prob: 0` used to fail every TR row mid-run; it is refused up front, naming the file."""
    png(tmp_path / "imgs" / "m1" / "p1.png")
    p = prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"'])
    bad = tmp_path / "bad.yaml"
    bad.write_text("features:\n  ocr:\n    space_prob: 0\n")
    with pytest.raises(ValueError, match=r"bad.yaml: features.ocr: space_prob must be in \(0, 1\]"):
        run_score(ScoreConfig(tmp_path / "imgs", p, tmp_path / "run", ontology=bad))
    assert not (tmp_path / "run").exists()   # refused before the run folder is made
