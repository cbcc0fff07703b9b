"""docs/engine.md's "Bad images" table, row by row: each row's input is built and what the row says is checked
against what `load_rgb` (or a whole run, where the row is about discovery) does. A row without a case here, or a
case without its row, fails, so the table cannot drift from the code."""
from __future__ import annotations

import io
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.support import engine_plugins, unprivileged
from tests.support.run_inputs import prompts
from vistar.engine.images import ImageError, load_rgb
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

DOC = Path(__file__).resolve().parents[1] / "docs" / "engine.md"
RNG = np.random.default_rng(11)
PICTURE = RNG.integers(0, 255, (24, 32, 3), dtype=np.uint8)


def table_inputs() -> list[str]:
    """The first cell of every row of the "Bad images" table."""
    section = DOC.read_text(encoding="utf-8").split("## Bad images", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| input ")]
    return [row.split(" | ", 1)[0][2:] for row in rows]


def saved(tmp_path: Path, name: str, image: Image.Image, fmt: str | None = None, **kw) -> Path:
    path = tmp_path / name
    image.save(path, fmt, **kw)
    return path


def written(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def encoded(image: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **kw)
    return buf.getvalue()


def refused(path: Path, pattern: str, **kw) -> str:
    with pytest.raises(ImageError) as err:
        load_rgb(path, **kw)
    assert re.search(pattern, str(err.value)), str(err.value)
    return str(err.value)


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_by_hand(width: int, height: int, depth: int, colour_type: int, rows: bytes) -> bytes:
    """A PNG written from the spec, for what Pillow cannot write (16-bit RGB) or to control every byte."""
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def zero_byte(tmp_path):
    refused(written(tmp_path, "a.png", b""), r"^empty file \(0 bytes\)$")


def not_an_image(tmp_path):
    refused(written(tmp_path, "a.png", b"this is not an image\n"), r"^not a recognised image format$")


def heic(tmp_path):
    for ext in (".heic", ".heif"):
        refused(written(tmp_path, f"a{ext}", b"\x00\x00\x00\x18ftypheic" + bytes(8)),
                rf"^not a recognised image format: this Pillow cannot decode \{ext} files; convert them to PNG$")


def damaged_png(tmp_path):
    good = encoded(Image.fromarray(PICTURE), "PNG")
    flipped = bytearray(good)
    flipped[60] ^= 0x40  # inside IDAT: Pillow alone decodes this to wrong pixels
    refused(written(tmp_path, "crc.png", bytes(flipped)), r"^corrupt or truncated image: PNG chunk IDAT: CRC mismatch$")
    rows = b"".join(b"\x00" + row.tobytes() for row in PICTURE)
    stream = zlib.compress(rows)
    bad_adler = stream[:-4] + struct.pack(">I", (zlib.adler32(rows) ^ 1))
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 32, 24, 8, 2, 0, 0, 0))
    png = b"\x89PNG\r\n\x1a\n" + ihdr + chunk(b"IDAT", bad_adler) + chunk(b"IEND", b"")
    refused(written(tmp_path, "adler.png", png), r"^corrupt or truncated image: zlib: incorrect data check$")
    refused(written(tmp_path, "cut.png", good[:-2]), r"^corrupt or truncated image: PNG chunk IEND: file ends inside it")


def cut_gif(tmp_path):
    frames = [Image.fromarray(RNG.integers(0, 255, (24, 32, 3), dtype=np.uint8)) for _ in range(2)]
    data = encoded(frames[0], "GIF", save_all=True, append_images=frames[1:])
    assert load_rgb(written(tmp_path, "whole.gif", data)).shape == (24, 32, 3)
    refused(written(tmp_path, "a.gif", data[:-1]), r"^corrupt or truncated image: GIF: file ends at byte \d+ .*\(truncated\)")


def cut_others(tmp_path, monkeypatch):
    from PIL import ImageFile

    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)  # a library asking Pillow to pad with grey
    for fmt, ext in (("JPEG", "jpg"), ("WEBP", "webp"), ("TIFF", "tif"), ("BMP", "bmp")):
        data = encoded(Image.fromarray(PICTURE), fmt)
        refused(written(tmp_path, f"a.{ext}", data[: len(data) * 2 // 3]), r"^corrupt or truncated image: .+")


def undetectable(tmp_path):
    """The row's honest limit: a byte changed inside JPEG scan data decodes, to other pixels, and is scored."""
    big = Image.fromarray(np.kron(PICTURE, np.ones((8, 8, 1), np.uint8)))
    data = bytearray(encoded(big, "JPEG", quality=90))
    original = load_rgb(written(tmp_path, "a.jpg", bytes(data)))
    scan = data.index(b"\xff\xda") + 200  # well inside the entropy-coded data after the start-of-scan marker
    data[scan] ^= 0x10
    assert not np.array_equal(load_rgb(written(tmp_path, "b.jpg", bytes(data))), original)


def short_read(tmp_path, monkeypatch):
    from vistar.engine import images

    path = saved(tmp_path, "a.png", Image.fromarray(PICTURE))
    real_fstat = images.os.fstat

    class Grown:  # the size the file had when opened; fewer bytes arrive
        def __init__(self, st):
            self.st_size = st.st_size + 1
    monkeypatch.setattr(images.os, "fstat", lambda fd: Grown(real_fstat(fd)))
    refused(path, r"^cannot read file: short read, \d+ bytes read of a \d+-byte file")


def alpha(tmp_path):
    assert load_rgb(saved(tmp_path, "a.png", Image.new("RGBA", (16, 16), (255, 0, 0, 128))))[0, 0].tolist() == [255, 127, 127]
    assert load_rgb(saved(tmp_path, "b.png", Image.new("LA", (16, 16), (10, 128))))[0, 0].tolist() == [132] * 3


def palette(tmp_path):
    pal = Image.new("P", (16, 16), 1)
    pal.putpalette([0, 0, 0, 0, 200, 0] + [0, 0, 0] * 254)
    pal.putpixel((0, 0), 0)
    with_index = load_rgb(saved(tmp_path, "t.png", pal, transparency=0))
    assert with_index[0, 0].tolist() == [255, 255, 255] and with_index[1, 1].tolist() == [0, 200, 0]
    assert load_rgb(saved(tmp_path, "o.png", pal))[0, 0].tolist() == [0, 0, 0]


def grey16(tmp_path):
    values = np.array([[0, 257, 32768, 65535]] * 8, np.uint16)
    expect = np.floor(values / 65535 * 255 + 0.5).astype(np.uint8)  # [0, 1, 128, 255]
    for name in ("a.png", "a.tif"):
        got = load_rgb(saved(tmp_path, name, Image.fromarray(values).resize((8, 8), Image.Resampling.NEAREST)))
        assert got[0, :, 0].tolist() == np.repeat(expect[0], 2).tolist()


def int_and_float(tmp_path):
    assert load_rgb(saved(tmp_path, "i.tif", Image.new("I", (8, 8), 32768)))[0, 0].tolist() == [128] * 3
    assert load_rgb(saved(tmp_path, "f.tif", Image.new("F", (8, 8), 0.25)))[0, 0].tolist() == [64] * 3


def rgb16(tmp_path):
    rows = b"".join(b"\x00" + struct.pack(">HHH", 0x8000, 0x4000, 0xFFFF) * 8 for _ in range(8))
    assert load_rgb(written(tmp_path, "a.png", png_by_hand(8, 8, 16, 2, rows)))[0, 0].tolist() == [128, 64, 255]


def cmyk(tmp_path):
    path = saved(tmp_path, "a.jpg", Image.new("CMYK", (16, 16), (0, 255, 255, 0)), quality=95)
    with Image.open(path) as im:
        assert im.info.get("adobe") is not None  # Pillow writes CMYK JPEGs Adobe-inverted
    assert np.allclose(load_rgb(path)[0, 0], [255, 0, 0], atol=8)


ORIENTED = {2: np.fliplr, 3: lambda a: np.rot90(a, 2), 4: np.flipud, 5: lambda a: np.rot90(np.fliplr(a), 1),
            6: lambda a: np.rot90(a, -1), 7: lambda a: np.rot90(np.fliplr(a), -1), 8: lambda a: np.rot90(a, 1)}


def orientation(tmp_path):
    """EXIF 2–8 against the spec's meaning, written out with numpy (the stored picture is shown transformed)."""
    for tag, upright in ORIENTED.items():
        exif = Image.Exif()
        exif[0x0112] = tag
        got = load_rgb(saved(tmp_path, f"o{tag}.png", Image.fromarray(PICTURE), exif=exif.tobytes()))
        assert np.array_equal(got, upright(PICTURE)), tag


def other_modes(tmp_path):
    assert load_rgb(saved(tmp_path, "l.png", Image.new("L", (8, 8), 77)))[0, 0].tolist() == [77] * 3
    assert load_rgb(saved(tmp_path, "1.png", Image.new("1", (8, 8), 1)))[0, 0].tolist() == [255] * 3
    assert load_rgb(saved(tmp_path, "y.tif", Image.new("YCbCr", (8, 8), (128, 128, 128))))[0, 0].tolist() == [128] * 3
    # L* = 128/255·100 = 50.2 with a = b = 0 is the grey Y = 0.186, sRGB 119 (CIE 1976 and IEC 61966-2-1)
    lab = load_rgb(saved(tmp_path, "l.tif", Image.new("LAB", (8, 8), (128, 128, 128))))[0, 0]
    assert abs(int(lab[0]) - 119) <= 2 and len(set(lab.tolist())) == 1


def tiny(tmp_path):
    refused(saved(tmp_path, "a.png", Image.new("RGB", (1, 1))), r"^image is 1x1; at least 8x8 pixels are needed$")
    assert load_rgb(saved(tmp_path, "b.png", Image.new("RGB", (8, 8)))).shape == (8, 8, 3)


def huge_not_jpeg(tmp_path):
    header_only = png_by_hand(20000, 20000, 8, 2, b"\x00" * 64)  # a decompression bomb's shape: almost no data
    refused(written(tmp_path, "a.png", header_only), r"^20000x20000 PNG image exceeds max_pixels=64000000; ")


def huge_jpeg(tmp_path):
    path = saved(tmp_path, "a.jpg", Image.new("RGB", (400, 300), (90, 120, 200)), quality=95)
    assert load_rgb(path, max_pixels=120_000).shape == (300, 400, 3)   # fits: decoded whole
    assert load_rgb(path, max_pixels=30_000).shape == (150, 200, 3)    # 1/2 is the smallest reduction that fits
    assert load_rgb(path, max_pixels=8_000).shape == (75, 100, 3)      # 1/4
    refused(path, r"even decoded at 1/8 scale", max_pixels=1_000)


def first_frame(tmp_path):
    frames = [Image.new("RGB", (16, 16), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    for name, kw in (("a.gif", {}), ("a.webp", {"lossless": True}), ("a.png", {}), ("a.tif", {})):
        path = saved(tmp_path, name, frames[0], save_all=True, append_images=frames[1:], **kw)
        with Image.open(path) as im:
            assert getattr(im, "n_frames", 1) == 2, name
        assert load_rgb(path)[0, 0].tolist() == [255, 0, 0], name


def unreadable(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch, {"TR": "tests.support.engine_plugins:METRIC_MEAN"})
    model = tmp_path / "imgs" / "m"
    model.mkdir(parents=True)
    (model / "folder.png").mkdir()
    (model / "link.png").symlink_to(tmp_path / "nowhere.png")
    saved(model, "fine.png", Image.fromarray(PICTURE))
    ids = ["folder", "link", "fine"]
    run_score(ScoreConfig(tmp_path / "imgs", prompts(tmp_path / "p.vistar", [f'{i}: [GD|TR] "A"' for i in ids]),
                          tmp_path / "run"))
    rows = read_scores(tmp_path / "run").set_index("prompt_id")
    assert sorted(rows.index) == sorted(ids)
    assert rows.loc["folder", "error"].startswith("cannot read file: [Errno 21] Is a directory")
    assert rows.loc["link", "error"].startswith("cannot read file: [Errno 2] No such file or directory")
    assert rows.loc["fine", "status"] == "ok"
    assert "prompt_without_image" not in (tmp_path / "run" / "problems.jsonl").read_text()
    refused(tmp_path / "vanished.png", r"^cannot read file: \[Errno 2\]")
    locked = saved(tmp_path, "locked.png", Image.fromarray(PICTURE))
    locked.chmod(0)
    child = unprivileged.python("-c", "import sys\nfrom vistar.engine.images import ImageError, load_rgb\ntry:\n"
                                "    load_rgb(sys.argv[1])\nexcept ImageError as exc:\n    print(exc)", str(locked))
    assert child.stdout.startswith("cannot read file: [Errno 13] Permission denied"), child.stdout + child.stderr


CASES = {
    "zero-byte file": zero_byte,
    "not an image (wrong content for its extension)": not_an_image,
    "HEIC/HEIF (AVIF on a Pillow without it)": heic,
    "PNG failing a check of its own: any chunk's CRC-32, zlib's checks of the pixel stream (its Adler-32, a stream "
    "cut before its end), a file cut before IEND (also when every row is there)": damaged_png,
    "GIF cut before its trailer (also after a whole first frame)": cut_gif,
    "JPEG, WebP, TIFF, BMP cut short": cut_others,
    "damaged bytes inside a JPEG's entropy-coded data, or inside the pixel data of WebP, GIF, TIFF or BMP": undetectable,
    "fewer bytes read than the file's size (rewritten while read, a failing disk)": short_read,
    "RGBA, LA": alpha,
    "P (palette), with or without a transparent index": palette,
    "16-bit greyscale PNG/TIFF (`I;16`)": grey16,
    "32-bit integer (`I`) and float (`F`) TIFF": int_and_float,
    "16-bit RGB(A) PNG": rgb16,
    "CMYK JPEG (incl. Adobe inverted)": cmyk,
    "EXIF orientation 2–8": orientation,
    "L, 1, YCbCr, LAB": other_modes,
    "smaller than 8×8 (e.g. 1×1)": tiny,
    "larger than `--max-pixels` (default 64 M), not JPEG (e.g. a 20000×20000 PNG)": huge_not_jpeg,
    "larger than `--max-pixels`, JPEG": huge_jpeg,
    "animated GIF/WebP/PNG, multi-page TIFF": first_frame,
    "unreadable file (permissions, vanished, a dangling link, a folder named `x.png` in a model folder)": unreadable,
}


def test_every_row_of_the_table_has_a_case():
    assert table_inputs() == list(CASES)


@pytest.mark.parametrize("row", table_inputs())
def test_the_row_holds(row, tmp_path, monkeypatch):
    case = CASES[row]
    case(tmp_path, monkeypatch) if case.__code__.co_argcount == 2 else case(tmp_path)
