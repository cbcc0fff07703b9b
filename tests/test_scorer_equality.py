"""`vistar.Scorer` gives the rows of `vistar score`: on the example set and on a TR/LI/CPA/PSC/GC/CSE mix (real OCR
and MediaPipe, tiny random-init checkpoints elsewhere), every (metric, score, status, details) equals the CLI's
whatever form the images come in (paths, PIL, numpy uint8 and float, torch CHW uint8 and NCHW float); given as paths,
every column but `shard` equals, keys included. Images given in memory have the key of docs/api.md."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support.executor_helpers import COLUMNS, build_workload
from vistar import Scorer
from vistar.cli import app
from vistar.engine.store import read_scores

pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
SAME = ["prompt_id", "role", "angle", "metric", "metric_version", "status", "score", "error", "details", "set"]


def _prompt_lines(path: Path) -> dict[str, str]:
    return {line.split(":")[0].strip(): line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")}


def _cli_rows(images: Path, prompts: Path, out: Path, *extra: str) -> pd.DataFrame:
    result = CliRunner().invoke(app, ["score", str(images), "--prompts", str(prompts), "--out", str(out), "--cpu-workers", "1", *extra])
    assert result.exit_code in (0, 3), result.output
    return read_scores(out)


def _by_file(frame: pd.DataFrame, files: list[Path], index_of_row) -> pd.DataFrame:
    """Rows keyed by the scored file (`model/name`), sorted, for comparing forms."""
    frame = frame.assign(file=[index_of_row(r) for r in frame.itertuples()])
    return frame.sort_values(["file", "metric"]).reset_index(drop=True)


FORMS = ("paths", "pil", "numpy", "numpy float", "tensor uint8", "tensor float")


def _in_form(form: str, file: Path):
    rgb = np.asarray(Image.open(file).convert("RGB"))
    chw = torch.from_numpy(rgb.copy()).permute(2, 0, 1)
    return {"paths": str(file), "pil": Image.open(file), "numpy": rgb, "numpy float": rgb.astype(np.float64) / 255.0,
            "tensor uint8": chw, "tensor float": chw[None].float() / 255.0}[form]   # float: a 1-image NCHW batch


def _scored_in_forms(scorer, files: list[Path], prompts: dict[str, str], **kwargs):
    """Two calls, each image in another form in each (form k of image i: FORMS[(i + offset) % 6]): every image is
    scored in two forms and every form on a third of the images. Yields (forms used, rows keyed by file)."""
    names = [f"{f.parent.name}/{f.name}" for f in files]
    for offset in (0, 3):
        forms = [FORMS[(i + offset) % len(FORMS)] for i in range(len(files))]
        got = scorer.score([_in_form(form, f) for form, f in zip(forms, files)], [prompts[f.stem] for f in files], **kwargs).to_pandas()
        yield set(forms), got.assign(file=[names[i] for i in got["index"]]).sort_values(["file", "metric"]).reset_index(drop=True)


def _assert_same(form: str, got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert len(got) == len(want), form
    for column in SAME:
        a, b = got[column].tolist(), want[column].tolist()
        assert [x if x == x else "nan" for x in a] == [x if x == x else "nan" for x in b], (form, column)


# --- the examples ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    out = tmp_path_factory.mktemp("examples") / "run"
    cli = _cli_rows(ROOT / "examples" / "images", ROOT / "examples" / "prompts.vistar", out)
    files = sorted((ROOT / "examples" / "images").rglob("*.png"))
    return cli, files, _prompt_lines(ROOT / "examples" / "prompts.vistar")


def test_examples_as_paths_give_the_cli_rows_keys_included(examples):
    cli, files, prompts = examples
    got = Scorer().score([str(f) for f in files], [prompts[f.stem] for f in files]).to_pandas()
    columns = [c for c in COLUMNS if c != "details"]
    want = cli.sort_values(["image", "metric"]).reset_index(drop=True)[columns]
    assert got.sort_values(["image", "metric"]).reset_index(drop=True)[columns].equals(want)
    assert got["details"].sort_values().tolist() == cli["details"].sort_values().tolist()


def test_examples_in_every_form_give_the_cli_scores(examples):
    cli, files, prompts = examples
    want = cli.assign(file=cli["image"]).sort_values(["file", "metric"]).reset_index(drop=True)
    for forms, got in _scored_in_forms(Scorer(angles=["TR"]), files, prompts):
        assert forms == set(FORMS)
        _assert_same(f"forms {sorted(forms)}", got, want)


# --- a mix of angles with real and tiny models ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def mix(tmp_path_factory):
    root, weights = build_workload(tmp_path_factory.mktemp("mix"))
    with open(root / "prompts.vistar", "a") as fh:   # PSC on the blocks scene (instances + depth: tiny YOLO and DPT)
        fh.write("s1: [PH|PSC] three wooden blocks stacked on a floor\n")
    for model in ("gen-a", "gen-b"):
        shutil.copy(root / "images" / model / "l1.png", root / "images" / model / "s1.png")
    extra = ["--ontology", str(root / "onto.yaml"), *(a for name, path in weights.items() for a in ("--model-path", f"{name}={path}"))]
    cli = _cli_rows(root / "images", root / "prompts.vistar", root / "run", "--batch-size", "2", *extra)
    assert set(cli.loc[cli.status == "ok", "angle"]) >= {"TR", "CPA", "PSC", "GC", "CSE"}, cli[["angle", "status", "error"]]
    files = sorted((root / "images").rglob("*.png"))
    scorer = Scorer(ontology=root / "onto.yaml", model_paths=weights, batch_size=2)
    return cli, files, _prompt_lines(root / "prompts.vistar"), scorer


def test_mix_as_paths_gives_the_cli_rows_keys_included(mix):
    cli, files, prompts, scorer = mix
    got = scorer.score([str(f) for f in files], [prompts[f.stem] for f in files]).to_pandas()
    key = ["image", "metric"]
    assert got.sort_values(key).reset_index(drop=True)[COLUMNS].equals(cli.sort_values(key).reset_index(drop=True)[COLUMNS])


def test_mix_in_every_form_gives_the_cli_scores(mix):
    cli, files, prompts, scorer = mix
    want = cli.assign(file=cli["image"]).sort_values(["file", "metric"]).reset_index(drop=True)
    for forms, got in _scored_in_forms(scorer, files, prompts, model="m"):
        assert forms == set(FORMS)
        _assert_same(f"forms {sorted(forms)}", got, want)


def test_memory_key_is_the_documented_pixel_hash(examples):
    _, files, prompts = examples
    rgb = np.asarray(Image.open(files[0]).convert("RGB"))
    result = Scorer(angles=["TR"]).score(rgb, prompts[files[0].stem])[0]
    sha = hashlib.sha256(f"rgb8 {rgb.shape[0]} {rgb.shape[1]}\n".encode() + rgb.tobytes()).hexdigest()
    assert result.image_sha256 == sha and result.image == "memory:" + sha[:16]
    assert result.model == "default" and result.sample == 0
