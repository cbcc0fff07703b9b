"""`vistar.Scorer`'s manners with a fake TR stage (tests.support.engine_plugins): arguments of the wrong type or value are
refused naming the argument, bad images and invalid prompts give the error rows `vistar score` gives, prompts come in
every documented form, `update`/`compute`/`reset` follow the report's rules, and `import vistar` loads nothing."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support import engine_plugins
from tests.support.executor_helpers import COLUMNS
from vistar import Scorer
from vistar.cli import app
from vistar.engine.store import SCHEMA, read_scores
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt
from vistar.report import build_report_data

ROOT = Path(__file__).resolve().parents[1]
LINE = 'sign: [GD|TR] A sign that says "OPEN" {text="OPEN"}'


@pytest.fixture(autouse=True)
def fake_tr(monkeypatch):
    engine_plugins.install(monkeypatch)


def _rgb(seed: int, h: int = 24, w: int = 32) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _cli(images: Path, prompts_text: str, out: Path) -> pd.DataFrame:
    (images.parent / "p.vistar").write_text(prompts_text)
    result = CliRunner().invoke(app, ["score", str(images), "--prompts", str(images.parent / "p.vistar"), "--out", str(out),
                                      "--cpu-workers", "1"])
    assert result.exit_code in (0, 3), result.output
    return read_scores(out)


# --- arguments -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, message", [
    ({"angles": 5}, TypeError, "angles must be a list"),
    ({"angles": ["TR", "XX"]}, ValueError, "angles: unknown angle code(s) XX"),
    ({"angles": []}, ValueError, "angles: an empty list"),
    ({"device": 0}, TypeError, "device must be a string"),
    ({"device": "gpu"}, ValueError, "device must be cpu, cuda, cuda:N or auto, not 'gpu'"),
    ({"ontology": 3}, TypeError, "ontology must be a path"),
    ({"weights": ["w.yaml"]}, TypeError, "weights must be a path"),
    ({"model_paths": ["dpt"]}, TypeError, "model_paths must map"),
    ({"judge": "http://x"}, TypeError, "judge must be a dict"),
    ({"judge": {"urll": "http://x"}}, ValueError, "judge: unknown setting(s) urll"),
    ({"run_dir": 7}, TypeError, "run_dir must be a path"),
    ({"batch_size": "8"}, TypeError, "batch_size must be an int"),
    ({"batch_size": 0}, ValueError, "batch_size must be at least 1"),
    ({"max_pixels": 1e6}, TypeError, "max_pixels must be an int"),
    ({"max_pixels": 0}, ValueError, "max_pixels must be at least 1"),
])
def test_constructor_refuses_wrong_arguments_naming_them(kwargs, error, message):
    with pytest.raises(error) as info:
        Scorer(**kwargs)
    assert message in str(info.value)


def test_angles_are_read_as_the_cli_reads_them():
    assert Scorer(angles="tr, li").angles == ["TR", "LI"] and Scorer(angles=("cpa",)).angles == ["CPA"]


@pytest.mark.parametrize("images, prompts, kwargs, error, message", [
    (5, LINE, {}, TypeError, "images: expected a path, a PIL image"),
    ([_rgb(0), b"png"], LINE, {}, TypeError, "images[1]: expected a path"),
    ([], LINE, {}, ValueError, "images: no image given"),
    (np.zeros((8, 8, 2), np.uint8), LINE, {}, ValueError, "images: a numpy image is HxW, HxWx3 (RGB) or HxWx4"),
    (np.zeros((2, 8, 8, 5), np.uint8), LINE, {}, ValueError, "images[0]: a numpy image"),
    (np.zeros((8, 8, 3), np.int64), LINE, {}, TypeError, "images: numpy images are uint8 (0-255) or float (0-1), not int64"),
    ([_rgb(0)], 5, {}, TypeError, "prompts: expected a prompt line"),
    ([_rgb(0), _rgb(1)], [LINE], {}, ValueError, "prompts: 1 prompts for 2 images"),
    ([_rgb(0)], "[GD|TR] A sign {text=", {}, ValueError, "prompts:"),
    ([_rgb(0)], {"prompt": LINE.split(": ", 1)[1], "id": "bad id"}, {}, ValueError, "invalid id 'bad id'"),
    ([_rgb(0)], {"id": "x"}, {}, ValueError, "prompts: 'prompt' is missing"),
    ([_rgb(0), _rgb(1)], [LINE, LINE.replace("OPEN", "SHUT")], {}, ValueError, "prompts[1]: id 'sign' is also prompts[0]"),
    ([_rgb(0)], LINE, {"model": 3}, TypeError, "model must be a string"),
    ([_rgb(0)], LINE, {"model": "a/b"}, ValueError, "model must be a non-empty name without '/'"),
])
def test_score_refuses_wrong_arguments_naming_them(images, prompts, kwargs, error, message):
    with pytest.raises(error) as info:
        Scorer().score(images, prompts, **kwargs)
    assert message in str(info.value)


def test_a_prompt_syntax_error_shows_where():
    with pytest.raises(ValueError) as info:
        Scorer().score(_rgb(0), ["[GD|TR] A sign {text="][0])
    assert str(info.value).startswith("prompts:") and "^" in str(info.value)


def test_tensor_arguments_are_checked_too():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=r"images: a tensor image is CHW \(or NCHW\) with 3 channels"):
        Scorer().score(torch.zeros(4, 8, 8), LINE)
    with pytest.raises(TypeError, match="images\\[1\\]: tensor images are uint8 \\(0-255\\) or float \\(0-1\\), not torch.int64"):
        Scorer().score([torch.zeros(3, 8, 8, dtype=torch.uint8), torch.zeros(3, 8, 8, dtype=torch.int64)], LINE)


# --- bad images and invalid prompts: the CLI's rows ----------------------------------------------------------------
def test_bad_files_give_the_cli_error_rows(tmp_path):
    folder = tmp_path / "images" / "m"
    folder.mkdir(parents=True)
    Image.fromarray(_rgb(1)).save(folder / "good.png")
    data = (folder / "good.png").read_bytes()
    (folder / "trunc.png").write_bytes(data[: len(data) // 2])
    (folder / "empty.png").write_bytes(b"")
    (folder / "text.png").write_text("not an image")
    Image.fromarray(_rgb(2, 4, 4)).save(folder / "tiny.png")
    (folder / "gone.png").symlink_to(tmp_path / "nowhere.png")
    names = ["good", "trunc", "empty", "text", "tiny", "gone"]
    lines = "".join(f'{n}: [GD|TR] A sign that says "OPEN" {{text="OPEN"}}\n' for n in names)
    cli = _cli(tmp_path / "images", lines, tmp_path / "run")
    got = Scorer().score([folder / f"{n}.png" for n in names], [f"{n}: " + LINE.split(": ", 1)[1] for n in names]).to_pandas()
    key = ["image", "metric"]
    assert got.sort_values(key).reset_index(drop=True)[COLUMNS].equals(cli.sort_values(key).reset_index(drop=True)[COLUMNS])
    assert set(got.loc[got.image != "m/good.png", "status"]) == {"error"} and set(got.loc[got.image == "m/good.png", "status"]) == {"ok"}


def test_bad_pixels_in_memory_are_error_rows_and_the_rest_is_scored(tmp_path):
    folder = tmp_path / "images" / "m"
    folder.mkdir(parents=True)
    Image.fromarray(_rgb(2, 4, 4)).save(folder / "tiny.png")
    cli = _cli(tmp_path / "images", 'tiny: [GD|TR] A sign that says "OPEN" {text="OPEN"}\n', tmp_path / "run")
    nan = np.full((16, 16, 3), np.nan)
    wide = _rgb(3).astype(np.float32) * 2.0 / 255.0
    results = Scorer().score([_rgb(2, 4, 4), nan, _rgb(3), wide], LINE)
    frame = results.to_pandas()
    assert frame.groupby("index")["status"].agg(set).tolist() == [{"error"}, {"error"}, {"ok"}, {"error"}]
    tiny = frame[frame["index"] == 0].sort_values("metric")
    assert tiny["error"].tolist() == cli.sort_values("metric")["error"].tolist()   # "image: image is 4x4; at least 8x8 ..."
    assert frame.loc[frame["index"] == 1, "error"].iloc[0] == "image: float pixels are not finite (NaN or inf)"
    assert frame.loc[frame["index"] == 3, "error"].iloc[0].startswith("image: float pixels outside [0, 1] (min 0, max 2)")


def test_empty_float_images_are_the_error_rows_of_an_empty_uint8_image():
    """A 0x0 float array or tensor has no pixel to check the range of: it is the 0x0 uint8 image's error row (same
    message, same key), and the call's good image is scored."""
    torch = pytest.importorskip("torch")
    empty = np.zeros((0, 0, 3), np.uint8)
    frame = Scorer().score([_rgb(3), empty, empty.astype(np.float32), torch.zeros(3, 0, 0)], LINE).to_pandas()
    assert frame.groupby("index")["status"].agg(set).tolist() == [{"ok"}, {"error"}, {"error"}, {"error"}]
    rows = [frame[frame["index"] == i].sort_values("metric")[["error", "key"]].reset_index(drop=True) for i in (1, 2, 3)]
    assert rows[0]["error"].iloc[0] == "image: image is 0x0; at least 8x8 pixels are needed"
    assert rows[1].equals(rows[0]) and rows[2].equals(rows[0])


def test_a_batch_of_no_images_is_refused_as_an_empty_list_is():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=r"^images: no image given \(a batch of 0 images\)$"):
        Scorer().score(torch.empty(0, 3, 8, 8), LINE)
    with pytest.raises(ValueError, match=r"^images\[1\]: no image given \(a batch of 0 images\)$"):
        Scorer().score([_rgb(0), np.zeros((0, 8, 8, 3), np.uint8)], LINE)


def test_an_invalid_prompt_gives_the_cli_error_rows_and_keys(tmp_path):
    folder = tmp_path / "images" / "m"
    folder.mkdir(parents=True)
    Image.fromarray(_rgb(1)).save(folder / "notext.png")
    cli = _cli(tmp_path / "images", "notext: [GD|TR] A plain wall\n", tmp_path / "run")
    got = Scorer().score(folder / "notext.png", "notext: [GD|TR] A plain wall").to_pandas()
    assert got["key"].tolist() == cli["key"].tolist() and set(got["status"]) == {"error"}
    # the same reason; where the prompt was given is named as each names it: `prompts` or `FILE:LINE`
    assert [e.replace(": prompts:", ": P:") for e in got["error"]] == [e.replace(f": {tmp_path / 'p.vistar'}:1:", ": P:")
                                                                      for e in cli["error"]]


# --- prompts and results -------------------------------------------------------------------------------------------
def test_prompts_in_every_form_and_one_for_all():
    core = 'A sign that says "OPEN" {text="OPEN"}'
    parsed = parse_prompt(f"[GD|TR] {core}", id="obj")
    forms = [f"line: [GD|TR] {core}", f"[GD|TR] {core}", parsed, {"id": 7, "prompt": f"[GD|TR] {core}", "source": "web"}]
    results = Scorer().score([_rgb(i) for i in range(4)], forms)
    anonymous = f"p-{parse_prompt(f'[GD|TR] {core}').fingerprint[:12]}"
    assert [r.prompt_id for r in results if r.metric == "TR"] == ["line", anonymous, "obj", "7"]
    for_all = Scorer().score([_rgb(0), _rgb(1)], parsed)
    assert [(r.index, r.prompt_id, r.sample) for r in for_all if r.metric == "TR"] == [(0, "obj", 0), (1, "obj", 1)]


def test_results_are_ordered_and_frame_like_the_store(tmp_path):
    results = Scorer().score([_rgb(0), _rgb(1)], [LINE, LINE.replace("sign:", "other:")], model="gen")
    assert len(results) == 4 and [(r.index, r.metric) for r in results] == [(0, "TR"), (0, "TR.odd"), (1, "TR"), (1, "TR.odd")]
    assert results[0].details == {"h": 24, "w": 32, "corner": _rgb(0)[0, 0].tolist()}
    frame = results.to_pandas()
    assert list(frame.columns) == [*SCHEMA.names, "index"]
    assert frame[SCHEMA.names].dtypes.equals(SCHEMA.empty_table().to_pandas().dtypes)
    assert results[0].score == pytest.approx(_rgb(0).mean() / 255.0)


def test_codes_in_any_case_are_the_ontology_codes():
    results = Scorer().score(_rgb(0), LINE.replace("[GD|TR]", "[gd|tr]"))
    assert [(r.role, r.angle, r.metric) for r in results] == [("GD", "TR", "TR"), ("GD", "TR", "TR.odd")]


def test_angles_filter_what_is_scored():
    assert len(Scorer(angles=["LI"]).score(_rgb(0), LINE)) == 0


# --- accumulation ----------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_update_compute_reset_follow_the_report(tmp_path):
    images = tmp_path / "images"
    for model, seed in (("a", 10), ("b", 20)):
        (images / model).mkdir(parents=True)
        for k in range(3):
            Image.fromarray(_rgb(seed + k)).save(images / model / f"s{k}.png")
    cli = _cli(images, "".join(f's{k}: [GD|TR] A sign that says "OPEN" {{text="OPEN"}}\n' for k in range(3)), tmp_path / "run")
    scorer = Scorer()
    for model in ("a", "b"):
        scorer.update([images / model / f"s{k}.png" for k in range(3)],
                      [f's{k}: [GD|TR] A sign that says "OPEN" {{text="OPEN"}}' for k in range(3)])
    data = scorer.compute(seed=3, resamples=200)
    want = build_report_data(cli, Ontology.load(), seed=3, resamples=200)
    for name in ("angle_scores", "overall", "role_scores"):
        assert getattr(data, name).equals(getattr(want, name)), name
    assert data.notes == want.notes
    a_mean = np.mean([_rgb(10 + k).mean() for k in range(3)]) / 255.0 * 100
    assert data.overall.set_index("model").loc["a", "overall"] == pytest.approx(a_mean)   # TR only: overall = TR
    scorer.reset()
    with pytest.raises(ValueError, match="nothing accumulated"):
        scorer.compute()


def test_a_file_updated_twice_counts_once_with_its_last_row(tmp_path):
    """A file given to update() again is the same row identity (image, model, prompt, sample, metric): as in a run
    folder, where re-scoring a changed file replaces its row, compute() keeps the last row, not both."""
    folder = tmp_path / "images" / "a"
    folder.mkdir(parents=True)
    prompts = [f's{k}: [GD|TR] A sign that says "OPEN" {{text="OPEN"}}' for k in range(2)]
    for k in range(2):
        Image.fromarray(_rgb(10 + k)).save(folder / f"s{k}.png")
    scorer = Scorer()
    scorer.update([folder / "s0.png", folder / "s1.png"], prompts)
    Image.fromarray(_rgb(30)).save(folder / "s0.png")   # the file changed: its new row replaces the old one
    last = scorer.score(folder / "s0.png", prompts[0])
    scorer.update(folder / "s0.png", prompts[0])
    tr = scorer.compute(resamples=100).angle_scores.set_index(["model", "angle"]).loc[("a", "TR")]
    s1 = _rgb(11).mean() / 255.0 * 100
    assert tr["n_ok"] == 2 and tr["mean"] == pytest.approx((next(r.score for r in last if r.metric == "TR") * 100 + s1) / 2)


def test_two_files_of_one_name_under_two_roots_are_two_samples_in_one_call_or_two(tmp_path):
    """`ckpt1/a/s0.png` and `ckpt2/a/s0.png` are two images of one (model, prompt): one call gives the second the
    next free sample, and so does a later call, so compute() counts both however update() was called."""
    prompt = 's0: [GD|TR] A sign that says "OPEN" {text="OPEN"}'
    files = []
    for k, root in enumerate(("ckpt1", "ckpt2")):
        (tmp_path / root / "a").mkdir(parents=True)
        Image.fromarray(_rgb(40 + k)).save(tmp_path / root / "a" / "s0.png")
        files.append(tmp_path / root / "a" / "s0.png")
    one, two = Scorer(), Scorer()
    one.update(files, [prompt, prompt])
    for file in files:
        two.update(file, prompt)
    for scorer in (one, two):
        assert sorted({(r["image_sha256"], r["sample"]) for r in scorer._rows}, key=lambda r: r[1]) == [
            (hashlib.sha256(f.read_bytes()).hexdigest(), k) for k, f in enumerate(files)]
        assert scorer.compute(resamples=10).angle_scores.set_index("angle").loc["TR", "n_ok"] == 2


# --- library manners -----------------------------------------------------------------------------------------------
def test_import_vistar_loads_no_engine_until_a_name_is_used():
    code = ("import sys, vistar; heavy = sorted(m for m in sys.modules if m.startswith(('vistar.', 'numpy', 'pandas', 'torch', 'PIL')));"
            "print(json.dumps(heavy)); vistar.Scorer; print('vistar.scoring' in sys.modules, vistar.__version__ != '')")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, cwd=ROOT, check=True)
    first, second = out.stdout.splitlines()
    assert json.loads(first) == [] and second == "True True"


def test_the_package_says_it_is_typed():
    assert (ROOT / "vistar" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()



def test_max_pixels_holds_for_images_in_memory_as_for_a_file_that_is_not_a_jpeg(tmp_path):
    """A PNG larger than max_pixels is an error row; an array or tensor cannot be decoded smaller either, so it is
    one too. The message names the Scorer's argument, not the CLI's option."""
    torch = pytest.importorskip("torch")
    Image.fromarray(_rgb(1, 16, 16)).save(tmp_path / "big.png")
    images = [tmp_path / "big.png", _rgb(1, 16, 16), torch.from_numpy(_rgb(1, 16, 16)).permute(2, 0, 1)]
    hint = "downscale it, or use a Scorer with a larger max_pixels= (and another run_dir)"
    frame = Scorer(max_pixels=16 * 16 - 1).score(images, LINE).to_pandas()
    assert frame.groupby("index")["error"].agg(set).tolist() == [
        {f"image: 16x16 PNG image exceeds max_pixels=255; {hint}"}, {f"image: 16x16 image exceeds max_pixels=255; {hint}"},
        {f"image: 16x16 image exceeds max_pixels=255; {hint}"}]
    assert set(Scorer(max_pixels=16 * 16).score(images, LINE).to_pandas()["status"]) == {"ok"}
