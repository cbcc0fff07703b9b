"""`vistar calibrate` end to end on a real run of the bundled TR examples, where the sharp image is always preferred."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from vistar.calibration.rescore import RESCORERS
from vistar.cli import app
from vistar.engine.store import read_scores
from vistar.ontology import Ontology

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PROMPTS = [ln.split(":", 1)[0] for ln in (EXAMPLES / "prompts.vistar").read_text().splitlines() if ln and not ln.startswith("#")]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = CliRunner().invoke(app, ["score", str(EXAMPLES / "images"), "--prompts", str(EXAMPLES / "prompts.vistar"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def write_pairs(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame(rows, columns=["image_a", "image_b", "preferred", "rater"]).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def pairs(run):
    """Two raters who agree: sharp beats typo and drop on every prompt, written in both column orders.
    One row names its image by sha256, one by absolute path; two rows are bad."""
    rows = []
    for rater in ("r1", "r2"):
        for pid in PROMPTS:
            rows.append((f"sharp/{pid}.png", f"typo/{pid}.png", "a", rater))
            rows.append((f"drop/{pid}.png", f"sharp/{pid}.png", "b", rater))
    sha = hashlib.sha256((EXAMPLES / "images" / "sharp" / f"{PROMPTS[0]}.png").read_bytes()).hexdigest()
    rows.append((sha, str((EXAMPLES / "images" / "typo" / f"{PROMPTS[1]}.png").resolve()), "a", "r3"))
    rows.append(("sharp/nope.png", f"typo/{PROMPTS[0]}.png", "a", "r3"))
    rows.append((f"sharp/{PROMPTS[0]}.png", f"typo/{PROMPTS[0]}.png", "maybe", "r3"))
    rows.append((sha, f"sharp/{PROMPTS[0]}.png", "a", "r3"))  # the same image named two ways
    return write_pairs(run / "pairs.csv", rows)


@pytest.mark.slow
def test_rescorer_reproduces_the_stored_tr_scores(run):
    """The fit re-scores from details; on real OCR output it must give back exactly what the metric stored."""
    df = read_scores(run)
    tr = RESCORERS["TR"]
    sub = np.stack([tr.extract(d) for d in df["details"]])
    got = tr.combine(sub, Ontology.load().metric_params("TR"), df["role"].to_numpy())
    assert got == pytest.approx(df["score"].to_numpy(), abs=1e-12)


@pytest.mark.slow
def test_calibrate_on_sharp_preferred_pairs(run, pairs, tmp_path):
    result = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--out", str(tmp_path), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # rich wraps long lines
    assert "pairs.csv:27: image(s) not in this run: sharp/nope.png" in said  # header is line 1, 25 good rows
    assert "pairs.csv:28: preferred must be a, b or tie, not 'maybe'" in said
    assert f"pairs.csv:29: both sides name the same image (sharp/{PROMPTS[0]}.png)" in said
    summary = json.loads((tmp_path / "calibration.json").read_text())
    (tr,) = summary["metrics"]
    assert tr["judgments"] == 4 * len(PROMPTS) + 1
    assert tr["ppa"] == 1.0 and tr["tau_b"] == 1.0  # sharp scores 1.0, the others less
    # every resample agrees perfectly: no interval rather than a zero-width one, and the reason
    assert tr["ppa_ci_low"] is None and tr["image_pairs"] == 2 * len(PROMPTS) + 1
    assert "metric TR: no ppa/acc23/tau_b interval: every resample gives 1" in said
    assert any("sharp never lost to the others" in w for w in summary["warnings"])  # its BT gap is the prior's
    assert tr["acc23"] == 1.0 and tr["epsilon"] == 0.0
    assert summary["agreement"]["raters"] == 3
    assert summary["agreement"]["alpha_nominal"] == pytest.approx(1.0)
    bt = pd.read_csv(tmp_path / "bradley_terry.csv").set_index("model")
    assert bt["rank_human"].idxmin() == "sharp" and bt["rank_TR"].idxmin() == "sharp"
    assert not (tmp_path / "weights.yaml").exists()
    assert "interrupted" not in said and "run.json" not in said  # a finished run has no notice


@pytest.mark.slow
def test_calibrating_an_unfinished_run_says_so(run, pairs, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run, copy, symlinks=True)
    meta = json.loads((copy / "run.json").read_text())
    (copy / "run.json").write_text(json.dumps({**meta, "status": "running"}))
    result = CliRunner().invoke(app, ["calibrate", str(copy), "--pairs", str(pairs), "--out", str(tmp_path / "c"),
                                      "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert "interrupted, or is still being scored" in " ".join(result.output.split())


@pytest.mark.slow
def test_fit_refuses_then_fits_with_a_lower_floor(run, pairs, tmp_path):
    refused = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--fit", "--out", str(tmp_path / "a"),
                                       "--resamples", "100"])
    assert refused.exit_code == 2
    said = " ".join(refused.output.split())
    assert "need at least 50" in said and "no weights file written" in said
    assert not (tmp_path / "a" / "weights.yaml").exists()
    fitted = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--fit", "--min-pairs", "10",
                                      "--trials", "15", "--out", str(tmp_path / "b"), "--resamples", "100"])
    assert fitted.exit_code == 0, fitted.output
    weights = tmp_path / "b" / "weights.yaml"
    overlay = yaml.safe_load(weights.read_text())
    assert set(overlay) == {"metrics"} and 0.0 <= overlay["metrics"]["TR"]["params"]["w_char"] <= 1.0
    report = CliRunner().invoke(app, ["report", str(run), "--weights", str(weights), "--out", str(tmp_path / "r"), "--resamples", "100"])
    assert report.exit_code == 0, report.output


@pytest.mark.slow
def test_pairs_file_without_required_columns(run, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("left,right,winner\na,b,a\n")
    result = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(bad)])
    assert result.exit_code == 2 and "lacks column(s) image_a, image_b, preferred" in " ".join(result.output.split())


def test_odd_pairs_files_are_reported_not_fatal(tmp_path):
    from tests.support.scores_builder import row, write_run

    run = write_run(tmp_path / "run", [row("A", "p", "TR", 0.9), row("B", "p", "TR", 0.2), row("B", "q", "TR", 0.5),
                                       row("A", "q", "TR", None, status="error", error="image: empty file (0 bytes)")])
    header_only = tmp_path / "header.csv"
    header_only.write_text("image_a,image_b,preferred\n")
    result = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(header_only), "--out", str(tmp_path / "none")])
    assert result.exit_code == 4 and "no usable judgment" in " ".join(result.output.split())
    assert not (tmp_path / "none").exists()
    odd = tmp_path / "odd.csv"  # column names in another case and padded, a blank line, a judgment of an errored image
    odd.write_text(" Image_A,IMAGE_B ,Preferred\n\nA/p.png,B/p.png,A\nA/q.png,B/q.png,b\n")
    result = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(odd), "--resamples", "100",
                                      "--out", str(tmp_path / "cal")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    assert summary["problems"] == [f"{odd}:4: no metric has an ok score for both images; not used"]  # line 4: blank lines count
    assert [(m["metric"], m["judgments"]) for m in summary["metrics"]] == [("TR", 1)]
    odd.write_bytes("image_a,image_b,preferred,rater\nA/p.png,B/p.png,a,Jos\xe9\n".encode("cp1252"))
    result = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(odd)])
    assert result.exit_code == 2 and f"{odd}:2: byte 0xE9 is not UTF-8 text" in " ".join(result.output.split())


def test_an_output_folder_that_cannot_be_written_is_a_clear_refusal(tmp_path):
    from tests.support.scores_builder import row, write_run

    run = write_run(tmp_path / "run", [row("A", "p", "TR", 0.9), row("B", "p", "TR", 0.2)])
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("image_a,image_b,preferred\nA/p.png,B/p.png,a\n")
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--resamples", "100",
                                      "--out", str(tmp_path / "file" / "cal")])
    assert result.exit_code == 2 and "Not a directory" in result.output and "Traceback" not in result.output


def test_a_file_with_no_usable_judgment_fails_with_the_reasons(tmp_path):
    """Every line names images the run has, but none has an ok score on both sides: exit 4, each line's reason,
    no output files (an empty metrics.csv would read as 'calibrated, nothing to see')."""
    from tests.support.scores_builder import row, write_run

    run = write_run(tmp_path / "run", [row("A", "p", "TR", 0.9), row("B", "p", "TR", None, status="error", error="unreadable"),
                                       row("A", "q", "TR", 0.4), row("B", "q", "TR", 0.5)])
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("image_a,image_b,preferred,angle\nA/p.png,B/p.png,a,\nA/q.png,B/q.png,b,CSE\n")
    result = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--out", str(tmp_path / "cal")])
    said = " ".join(result.output.split())
    assert result.exit_code == 4, result.output
    assert f"{pairs}:2: no metric has an ok score for both images; not used" in said
    assert f"{pairs}:3: angle 'CSE' is not an angle of this run (TR); not used" in said
    assert not (tmp_path / "cal").exists()


def test_dedupe_option(tmp_path):
    from tests.support.scores_builder import row, write_run
    from vistar.engine.store import ResultStore

    first, later = row("A", "p", "TR", 0.9), row("A", "p2", "TR", 0.1)
    later["image"] = first["image"]
    run = write_run(tmp_path / "run", [row("B", "p", "TR", 0.5), first])
    ResultStore(run).write([later])
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("image_a,image_b,preferred\nA/p.png,B/p.png,a\n")
    refused = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--out", str(tmp_path / "a")])
    assert refused.exit_code == 2 and "A/p.png TR (model A prompt p sample 0, model A prompt p2 sample 0)" in " ".join(refused.output.split())
    kept = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--dedupe", "latest", "--out", str(tmp_path / "b")])
    assert kept.exit_code == 0, kept.output
    assert json.loads((tmp_path / "b" / "calibration.json").read_text())["metrics"][0]["ppa"] == 0.0  # the later 0.1 row
    bad = CliRunner().invoke(app, ["calibrate", str(run), "--pairs", str(pairs), "--dedupe", "first"])
    assert bad.exit_code == 2 and "--dedupe must be one of error, latest" in bad.output
