"""A file failing its format's own integrity checks is an `error` row naming the check, never `ok` with pixels
nobody generated (issue: 60 zeroed bytes inside a PNG's IDAT were scored `ok`)."""
import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from PIL import Image

from tests.support import engine_plugins
from tests.support.run_inputs import prompts
from vistar.engine.images import ImageError, load_rgb
from vistar.engine.runner import ScoreConfig, run_score
from vistar.engine.store import read_scores

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = [REPO / "examples" / "images" / name for name in
            ("sharp/lab-label.png", "typo/book-cover.png", "drop/poster-open.png", "sharp/sale-banner.png")]
ORIGINALS = {path: load_rgb(path) for path in EXAMPLES}


def chunks(data: bytes) -> list[tuple[bytes, int, int]]:
    """(type, start of its data, end of its data) of every chunk, written out by hand from the PNG spec."""
    out, pos = [], 8
    while pos < len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        out.append((kind, pos + 8, pos + 8 + length))
        pos += 12 + length
    return out


def with_chunk_data(data: bytes, index: int, payload: bytes, fix_crc: bool = True) -> bytes:
    """`data` with chunk `index`'s data replaced; its length and (when `fix_crc`) its CRC rewritten to match,
    as a writer that checksummed already damaged bytes would."""
    kind, start, end = chunks(data)[index]
    crc = struct.pack(">I", zlib.crc32(kind + payload)) if fix_crc else data[end:end + 4]
    return data[:start - 8] + struct.pack(">I", len(payload)) + kind + payload + crc + data[end + 4:]


def idat(data: bytes) -> tuple[int, int, int]:
    return next((i, start, end) for i, (kind, start, end) in enumerate(chunks(data)) if kind == b"IDAT")


def outcome(path: Path, data: bytes):
    path.write_bytes(data)
    try:
        return load_rgb(path)
    except ImageError as exc:
        return exc


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(EXAMPLES), where=st.floats(0, 1, exclude_max=True), span=st.integers(1, 64),
       flip=st.integers(0, 255), fix_crc=st.booleans())
def test_no_damage_inside_idat_is_scored_with_wrong_pixels(tmp_path, which, where, span, flip, fix_crc):
    """Zero `span` bytes (flip=0) or XOR one byte with `flip` inside the first IDAT's data; with `fix_crc` the
    chunk CRC is recomputed, so only zlib's own checks are left to notice. Either the file is refused or its
    pixels are exactly the original's."""
    data = which.read_bytes()
    index, start, end = idat(data)
    payload = bytearray(data[start:end])
    at = int(where * len(payload))
    if flip:
        payload[at] ^= flip
    else:
        payload[at:at + span] = bytes(len(payload[at:at + span]))
    got = outcome(tmp_path / "x.png", with_chunk_data(data, index, bytes(payload), fix_crc))
    assert isinstance(got, ImageError) or np.array_equal(got, ORIGINALS[which]), (which.name, at, span, flip, fix_crc)


def test_the_reported_file_is_an_error_row_naming_the_check(tmp_path, monkeypatch):
    engine_plugins.install(monkeypatch, {"TR": "tests.support.engine_plugins:METRIC_MEAN"})
    data = bytearray(EXAMPLES[0].read_bytes())
    data[200:260] = bytes(60)   # the reproduction
    (tmp_path / "imgs" / "m").mkdir(parents=True)
    (tmp_path / "imgs" / "m" / "bad.png").write_bytes(bytes(data))
    (tmp_path / "imgs" / "m" / "good.png").write_bytes(EXAMPLES[0].read_bytes())
    run_score(ScoreConfig(tmp_path / "imgs", prompts(tmp_path / "p.vistar", ['bad: [GD|TR] "A"', 'good: [GD|TR] "A"']),
                          tmp_path / "run"))
    rows = read_scores(tmp_path / "run").set_index("prompt_id")
    assert rows.loc["bad", "status"] == "error"
    assert rows.loc["bad", "error"] == "image: corrupt or truncated image: PNG chunk IDAT: CRC mismatch"
    assert rows.loc["good", "status"] == "ok"


def test_a_wrong_adler32_is_refused_even_with_good_chunk_crcs(tmp_path):
    data = EXAMPLES[0].read_bytes()
    index, start, end = idat(data)
    stream = data[start:end]
    assert zlib.adler32(zlib.decompress(stream)) == struct.unpack(">I", stream[-4:])[0]  # the trailer is the Adler-32
    bad = stream[:-4] + struct.pack(">I", (zlib.adler32(zlib.decompress(stream)) + 1) & 0xFFFFFFFF)
    with pytest.raises(ImageError, match=r"^corrupt or truncated image: zlib: incorrect data check$"):
        load_rgb(_write(tmp_path / "a.png", with_chunk_data(data, index, bad)))


def test_a_zlib_stream_cut_before_its_end_is_refused(tmp_path):
    """All rows are there (Pillow stops reading when it has them), only the stream's end and its checksum are not."""
    data = EXAMPLES[0].read_bytes()
    index, start, end = idat(data)
    with pytest.raises(ImageError, match=r"zlib: the IDAT stream ends before its end marker .*\(truncated\)"):
        load_rgb(_write(tmp_path / "a.png", with_chunk_data(data, index, data[start:end - 4])))


def test_an_ancillary_chunk_with_a_bad_crc_is_refused(tmp_path):
    """eXIf (orientation), tRNS, gAMA change pixels too: every chunk's CRC counts."""
    im = Image.new("RGB", (16, 16), (1, 2, 3))
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    im.save(buf, "PNG", exif=exif.tobytes())
    data = bytearray(buf.getvalue())
    kind, start, end = next(c for c in chunks(bytes(data)) if c[0] == b"eXIf")
    data[end - 1] ^= 0x01
    with pytest.raises(ImageError, match=r"^corrupt or truncated image: PNG chunk eXIf: CRC mismatch$"):
        load_rgb(_write(tmp_path / "a.png", bytes(data)))


def _frames(fmt: str, **kw) -> bytes:
    rng = np.random.default_rng(3)
    frames = [Image.fromarray(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)) for _ in range(3)]
    buf = io.BytesIO()
    frames[0].save(buf, fmt, save_all=True, append_images=frames[1:], **kw)
    return buf.getvalue()


def _one(fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(4).integers(0, 255, (48, 48, 3), dtype=np.uint8)).save(buf, fmt, **kw)
    return buf.getvalue()


@pytest.mark.parametrize("name, cut, says", [
    ("png_without_iend", lambda d: d[:-12], r"PNG: file ends at byte \d+ before the IEND chunk \(truncated\)"),
    ("png_iend_crc_cut", lambda d: d[:-2], r"PNG chunk IEND: file ends inside it \(truncated\)"),
    ("png_half", lambda d: d[: len(d) // 2], r"PNG chunk IDAT: file ends inside it \(truncated\)"),
    ("gif_without_trailer", lambda d: d[:-1], r"GIF: file ends at byte \d+ before the trailer \(truncated\)"),
    ("gif_cut_in_last_frame", lambda d: d[:-40], r"GIF: file ends at byte \d+ inside a data block \(truncated\)"),
    ("jpeg_without_eoi", lambda d: d[:-2], r"image file is truncated"),
    ("progressive_jpeg_half", lambda d: d[: len(d) // 2], r"image file is truncated"),
    ("webp_cut", lambda d: d[:-10], r"corrupt or truncated image: "),
    ("animated_webp_cut_in_last_frame", lambda d: d[:-10], r"corrupt or truncated image: "),
])
def test_a_truncated_stream_is_refused_naming_why(tmp_path, name, cut, says):
    """Cut where the first frame still decodes whole (a GIF or WebP cut in its last frame, a PNG missing only
    IEND): the pixels would be right, but the file is not what was written, so it is not scored."""
    data = {"png": lambda: _one("PNG"), "gif": lambda: _frames("GIF"), "jpeg": lambda: _one("JPEG"),
            "progressive": lambda: _one("JPEG", progressive=True), "webp": lambda: _one("WEBP"),
            "animated": lambda: _frames("WEBP")}[name.split("_")[0]]()
    with pytest.raises(ImageError, match=says) as err:
        load_rgb(_write(tmp_path / f"x.{name.split('_')[0]}", cut(data)))
    assert str(err.value).startswith("corrupt or truncated image: ")


def test_whole_files_of_every_checked_format_still_decode(tmp_path):
    """The checks refuse nothing sound: an animated GIF and PNG, and a PNG whose IDAT is split in many chunks."""
    for name, data in (("a.gif", _frames("GIF")), ("a.png", _frames("PNG")), ("b.png", _one("PNG"))):
        assert load_rgb(_write(tmp_path / name, data)).shape[2] == 3
    raw = np.random.default_rng(5).integers(0, 255, (40, 40, 3), dtype=np.uint8)
    stream = zlib.compress(b"".join(b"\x00" + row.tobytes() for row in raw))
    parts = [stream[i:i + 100] for i in range(0, len(stream), 100)]
    body = b"".join(_chunk(b"IDAT", p) for p in parts)
    split = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 40, 40, 8, 2, 0, 0, 0)) + body + _chunk(b"IEND", b"")
    assert np.array_equal(load_rgb(_write(tmp_path / "split.png", split)), raw)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
