"""With `--upstream`, every benchmark's judge receives the image exactly as the benchmark's own script would send
it, for greyscale, greyscale+alpha, RGB (written with other settings than Pillow's defaults), RGBA, palette with
transparency, 16-bit greyscale and 16-bit RGB PNGs and a JPEG: `vistar score --suite NAME --upstream` against the
local judge, each image sent compared with the output of the script's own `encode_image` (run from the pinned
copy in ../shared/data) on the same file. WISE and PhyBench send the file's bytes under their fixed MIME label,
UniEval hands the file itself to the judging model (vistar labels it with its own type), GenExam re-encodes it
to JPEG, which its `encode_image` cannot do for LA and 16-bit greyscale: those are error rows, as the script
fails on them."""
from __future__ import annotations

import base64
import io
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.support.protocol_helpers import shared
from tests.support.upstream_helpers import fake_module, load_module, upstream_dir
from vistar.cli import app
from vistar.engine.store import read_scores
from vistar.vlm.protocols import PROTOCOLS
from vistar.vlm.testing_server import JudgeServer

RNG = np.random.default_rng(11)
RGB = RNG.integers(0, 256, (36, 48, 3), dtype=np.uint8)
ALPHA = RNG.integers(0, 256, (36, 48), dtype=np.uint8)


def _png16(rgb16: np.ndarray) -> bytes:
    """A 16-bit-per-channel RGB PNG, written chunk by chunk (Pillow writes none)."""
    h, w, _ = rgb16.shape
    raw = b"".join(b"\0" + rgb16[y].astype(">u2").tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _encoded(image: Image.Image, fmt: str = "PNG", **options) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format=fmt, **options)
    return buf.getvalue()


def image_files() -> dict[str, tuple[str, bytes]]:
    """model folder -> (file suffix, file bytes): one image per mode, each with its own pixels."""
    palette = Image.fromarray(RGB).quantize(16)
    palette.info["transparency"] = 3
    return {
        "L": (".png", _encoded(Image.fromarray(RGB[..., 0]))),
        "LA": (".png", _encoded(Image.merge("LA", [Image.fromarray(RGB[..., 1]), Image.fromarray(ALPHA)]))),
        "RGB": (".png", _encoded(Image.fromarray(RGB), compress_level=1, pnginfo=_text_chunk())),
        "RGBA": (".png", _encoded(Image.fromarray(np.dstack([RGB[::-1], ALPHA])))),
        "P": (".png", _encoded(palette, transparency=3)),
        "I16": (".png", _encoded(Image.fromarray(RGB[..., 2].astype(np.uint16) * 257))),
        "RGB16": (".png", _png16(RGB[:, ::-1].astype(np.uint16) * 257 + 5)),
        "JPEG": (".jpg", _encoded(Image.fromarray(RGB[::-1, ::-1]), "JPEG", quality=90)),
    }


def _text_chunk():
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Software", "another encoder")
    return info


def run(tmp_path: Path, suite: str, data: Path, stem: str, upstream: Path) -> tuple[list[dict], dict, dict[str, Path]]:
    """`vistar score --suite SUITE --upstream` over IMAGES/<mode>/<stem>.<ext>: (request bodies, a row by model, the file by model)."""
    files = {}
    for model, (suffix, content) in image_files().items():
        folder = tmp_path / "images" / model
        folder.mkdir(parents=True)
        files[model] = folder / f"{stem}{suffix}"
        files[model].write_bytes(content)
    with JudgeServer() as server:
        result = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--suite", suite, "--data-dir", str(data),
                                          "--upstream", str(upstream), "--out", str(tmp_path / "run"), "--judge-url",
                                          server.url, "--judge-model", "t", "--partial-ok"],
                                    env={"VISTAR_HOME": str(tmp_path / "home")})
        bodies = list(server.requests)
    assert result.exit_code == 0, result.output
    rows = {r.model: r for r in read_scores(tmp_path / "run").itertuples()}
    return bodies, rows, files


def sent_images(bodies: list[dict]) -> list[str]:
    """The data URL of the scored image (the first image part) of every request that has one."""
    urls = []
    for body in bodies:
        parts = [p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"]
                 if p.get("type") == "image_url"]
        if parts:
            urls.append(parts[0]["image_url"]["url"])
    return urls


@pytest.mark.slow
@pytest.mark.parametrize("suite,script", [("wise-verified", "vllm_eval.py"), ("wise-legacy", "WISE_legacy/gpt_eval.py")])
def test_wise_sends_the_file_bytes(tmp_path, suite, script):
    up = upstream_dir("WISE")
    bodies, rows, files = run(tmp_path, suite, shared("WISE"), "1", up)
    upstream = load_module(up / script, requests=fake_module("requests"), openai=fake_module("openai"))
    expected = {f"data:image/png;base64,{upstream.encode_image(str(path))}" for path in files.values()}
    assert sorted(sent_images(bodies)) == sorted(expected)
    assert {m: r.status for m, r in rows.items()} == {m: "ok" for m in files}


def test_phybench_sends_the_file_bytes(tmp_path):
    data = tmp_path / "PhyBench"
    data.mkdir()
    (data / "force.json").write_text(json.dumps([{"prompt": "a ball on a slope", "normal": "it rolls down",
                                                  "law": "Gravity", "grading": "Scene score 2; physics score 3"}]))
    up = upstream_dir("PhyBench")
    bodies, rows, files = run(tmp_path, "phybench", data, "Gravity_0", up)
    upstream = load_module(up / "GPT_make_eval.py", {"xx": None}, openai=fake_module("openai", OpenAI=lambda **_: None),
                           jsonlines=fake_module("jsonlines"))
    expected = {f"data:image/jpeg;base64,{upstream.encode_image(str(path))}" for path in files.values()}
    assert sorted(sent_images(bodies)) == sorted(expected)
    assert {r.status for r in rows.values()} == {"ok"}


@pytest.mark.slow
def test_unieval_sends_the_file_as_it_is(tmp_path):
    data = shared("UniEval")
    item = PROTOCOLS["unieval"].load_items(data)[0]
    bodies, rows, files = run(tmp_path, "unieval", data, f"{item.id}_0", upstream_dir("UniEval"))
    mime = {".png": "image/png", ".jpg": "image/jpeg"}
    expected = [f"data:{mime[p.suffix]};base64,{base64.b64encode(p.read_bytes()).decode()}" for p in files.values()]
    assert sorted(sent_images(bodies)) == sorted(expected * len(item.qas))
    assert {r.status for r in rows.values()} == {"ok"}


@pytest.mark.slow
def test_genexam_sends_its_encode_image_output_and_fails_where_it_fails(tmp_path):
    data = tmp_path / "GenExam"
    (data / "data" / "annotations").mkdir(parents=True)
    (data / "data" / "images" / "Biology").mkdir(parents=True)
    (data / "data" / "images" / "Biology" / "Biology_1.png").write_bytes(_encoded(Image.fromarray(RGB[:, :, ::-1])))
    record = {"id": "Biology_1", "prompt": "Draw a labelled plant cell.", "image_path": "Biology/Biology_1.png",
              "scoring_points": [{"question": "Is a nucleus drawn?", "score": 0.5}, {"question": "Is it labelled?", "score": 0.5}]}
    (data / "data" / "annotations" / "Biology.jsonl").write_text(json.dumps(record) + "\n")
    up = upstream_dir("GenExam")
    bodies, rows, files = run(tmp_path, "genexam", data, "Biology_1", up)
    upstream = load_module(up / "run_eval.py", requests=fake_module("requests"))
    expected, refused = set(), {}
    for model, path in files.items():
        try:
            expected.add(f"data:image/jpeg;base64,{upstream.encode_image(str(path), target_size=768)}")
        except OSError as exc:  # the script cannot send this image either
            refused[model] = str(exc)
    assert set(refused) == {"LA", "I16"}
    assert sorted(sent_images(bodies)) == sorted(expected)
    for model, row in rows.items():
        assert row.status == ("error" if model in refused else "ok"), (model, row.error)
        if model in refused:
            assert "encode_image" in row.error and refused[model] in row.error
