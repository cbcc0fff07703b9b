"""Every odd image the issue lists gets its defined behaviour, and the run always completes."""
import io
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.support import engine_plugins
from vistar.engine.images import ImageError, load_rgb
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

REPO = Path(__file__).resolve().parents[1]


def _png_header_only(path: Path, width: int, height: int) -> None:
    """A syntactically valid PNG claiming width x height, with almost no pixel data (a decompression bomb's shape)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def huge_jpeg(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("huge") / "huge.jpg"
    code = f"from PIL import Image; Image.new('RGB', (20000, 20000), (90, 120, 200)).save({str(path)!r}, quality=50)"
    subprocess.run([sys.executable, "-c", code], check=True)  # 1.2 GB while encoding: kept out of this process
    return path


def _peak_rss_mib(code: str) -> float:
    probe = code + "\nimport resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=REPO)
    return float(out.stdout.strip().splitlines()[-1])


def _bad_set(folder: Path, huge_jpeg: Path) -> dict[str, Path]:
    m = folder / "m"
    m.mkdir(parents=True)
    files = {}

    def save(name, image, **kw):
        files[name.split(".")[0]] = m / name
        image.save(m / name, **kw)

    (m / "zero.png").write_bytes(b"")
    (m / "text.png").write_text("this is not an image\n")
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(buf, "PNG")
    (m / "trunc_png.png").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(buf, "JPEG")
    (m / "trunc_jpeg.jpg").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    files.update({n: m / f for n, f in (("zero", "zero.png"), ("text", "text.png"), ("trunc_png", "trunc_png.png"),
                                        ("trunc_jpeg", "trunc_jpeg.jpg"))})
    save("rgba.png", Image.new("RGBA", (16, 16), (255, 0, 0, 128)))
    save("la.png", Image.new("LA", (16, 16), (0, 0)))
    pal = Image.new("P", (16, 16), 1)
    pal.putpalette([0, 0, 0, 0, 200, 0] + [0, 0, 0] * 254)
    pal.putpixel((0, 0), 0)
    save("pal.png", pal, transparency=0)
    save("g16.png", Image.fromarray(np.full((16, 16), 32768, np.uint16)))
    save("cmyk.jpg", Image.new("CMYK", (16, 16), (0, 255, 255, 0)), quality=95)
    rot = Image.new("RGB", (40, 20), (0, 0, 255))
    rot.paste((255, 0, 0), (0, 0, 20, 20))  # left half red
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to display
    save("exif.jpg", rot, exif=exif.tobytes(), quality=95)
    save("one.png", Image.new("RGB", (1, 1), (1, 2, 3)))
    _png_header_only(m / "huge.png", 20000, 20000)
    files["huge"] = m / "huge.png"
    (m / "hugejpeg.jpg").symlink_to(huge_jpeg)
    files["hugejpeg"] = m / "hugejpeg.jpg"
    return files


ERRORS = {"zero": "empty file (0 bytes)", "text": "not a recognised image format", "trunc_png": "corrupt or truncated",
          "trunc_jpeg": "corrupt or truncated", "one": "at least 8x8", "huge": "20000x20000 PNG image exceeds max_pixels"}


@pytest.mark.slow
def test_every_bad_image_has_its_defined_behaviour(tmp_path, monkeypatch, huge_jpeg):
    engine_plugins.install(monkeypatch, {"TR": "tests.support.engine_plugins:METRIC_MEAN"})
    files = _bad_set(tmp_path / "imgs", huge_jpeg)
    lines = [f'{name}: [GD|TR] "A"' for name in files]
    (tmp_path / "p.vistar").write_text("\n".join(lines) + "\n")
    summary = run_score(ScoreConfig(tmp_path / "imgs", tmp_path / "p.vistar", tmp_path / "run", batch_size=4))
    df = read_scores(tmp_path / "run").set_index("prompt_id")
    assert sorted(df.index) == sorted(files) and summary.scored == len(files)  # one row each: the run completed
    for name, says in ERRORS.items():
        assert df.loc[name, "status"] == "error" and says in df.loc[name, "error"], (name, df.loc[name, "error"])
        assert df.loc[name, "error"].startswith("image: ")
    ok = {n: json.loads(df.loc[n, "details"]) for n in files if n not in ERRORS}
    assert all(df.loc[n, "status"] == "ok" for n in ok)
    assert ok["rgba"]["corner"] == [255, 127, 127]      # 50 % red composited on white
    assert ok["la"]["corner"] == [255, 255, 255]        # fully transparent -> white
    assert ok["pal"]["corner"] == [255, 255, 255]       # transparent palette index -> white
    assert df.loc["pal", "score"] == pytest.approx(((255 * 3) + 255 * 200) / (256 * 3) / 255)
    assert ok["g16"]["corner"] == [128, 128, 128]       # 32768 / 65535 of full scale
    assert np.allclose(ok["cmyk"]["corner"], [255, 0, 0], atol=8)
    assert (ok["exif"]["h"], ok["exif"]["w"]) == (40, 20)  # orientation applied: portrait now
    assert np.allclose(ok["exif"]["corner"], [255, 0, 0], atol=8)  # the left (red) half is now on top
    assert (ok["hugejpeg"]["h"], ok["hugejpeg"]["w"]) == (5000, 5000)  # draft-decoded at 1/4 to fit max_pixels
    assert np.allclose(ok["hugejpeg"]["corner"], [90, 120, 200], atol=4)


@pytest.mark.slow
def test_exif_bottom_row_is_blue_after_rotation(tmp_path, huge_jpeg):
    files = _bad_set(tmp_path, huge_jpeg)
    rgb = load_rgb(files["exif"])
    assert rgb.shape == (40, 20, 3)
    assert np.allclose(rgb[2, 10], [255, 0, 0], atol=8) and np.allclose(rgb[-3, 10], [0, 0, 255], atol=8)


@pytest.mark.slow
def test_huge_png_refused_from_header_and_huge_jpeg_memory_stays_bounded(tmp_path, huge_jpeg):
    _png_header_only(tmp_path / "huge.png", 20000, 20000)
    bomb_limit = Image.MAX_IMAGE_PIXELS
    with pytest.raises(ImageError, match="exceeds max_pixels"):
        load_rgb(tmp_path / "huge.png")
    assert load_rgb(huge_jpeg).shape == (5000, 5000, 3)
    assert Image.MAX_IMAGE_PIXELS == bomb_limit  # Pillow's own guard stays in force for other code
    base = _peak_rss_mib("import vistar.engine.images")
    png_peak = _peak_rss_mib(f"from vistar.engine.images import load_rgb\ntry:\n    load_rgb({str(tmp_path / 'huge.png')!r})\n"
                             "except Exception:\n    pass")
    jpeg_peak = _peak_rss_mib(f"from vistar.engine.images import load_rgb\nload_rgb({str(huge_jpeg)!r})")
    # A full decode would need 20000*20000*3 B = 1144 MiB for the array alone (PIL holds 4 B/pixel: 1526 MiB).
    assert png_peak - base < 50, (base, png_peak)       # nothing decoded
    assert jpeg_peak - base < 400, (base, jpeg_peak)    # 5000x5000: 72 MiB array + 95 MiB PIL buffer
    with pytest.raises(ImageError, match="even decoded at 1/8 scale"):
        load_rgb(huge_jpeg, max_pixels=1_000_000)


def test_a_file_that_cannot_be_read_is_an_image_error_not_a_crash(tmp_path):
    """`vistar gc fit-padim` decodes a folder with load_rgb alone (no hashing first): a dangling link or a
    folder named like an image must be skipped with a reason, not end the command."""
    (tmp_path / "gone.png").symlink_to(tmp_path / "nowhere.png")
    (tmp_path / "folder.png").mkdir()
    for name in ("gone.png", "folder.png"):
        with pytest.raises(ImageError, match="^cannot read file: "):
            load_rgb(tmp_path / name)
