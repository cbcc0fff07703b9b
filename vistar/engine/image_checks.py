"""A format's own integrity checks, run on the file's bytes before they are decoded.

Pillow does not check them all: it skips the CRC of IDAT chunks and stops inflating once it has every row, so
a PNG whose compressed pixels were damaged decodes to wrong pixels without a word (zlib's Adler-32 trailer is
never read), and a GIF cut after its first frame decodes fine. Scoring such a file would give an `ok` row for
pixels nobody generated. JPEG, WebP, TIFF and BMP truncation Pillow reports itself; their pixel data carries no
checksum, so damage inside it cannot be detected by anyone (docs/engine.md, "Bad images").
"""
from __future__ import annotations

import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_INFLATE_STEP = 1 << 20   # inflated bytes held at once while checking: the output is only counted, never kept


class IntegrityError(ValueError):
    """The file's bytes fail a check their format defines; the message names the check."""


def check_stream(data: bytes) -> None:
    """Raise IntegrityError when `data` fails the checks of the format its signature names (PNG, APNG, GIF).
    By signature, not by what Pillow made of the file: Pillow refuses a PNG whose header chunks fail their CRC
    as "not an image", and the user must hear which check failed."""
    if data.startswith(PNG_SIGNATURE):
        check_png(data)
    elif data.startswith((b"GIF87a", b"GIF89a")):
        check_gif(data)


def check_png(data: bytes) -> None:
    """Every chunk's CRC-32 up to IEND, and the IDAT stream as zlib reads it: complete, Adler-32 matching.
    Bytes after IEND are ignored, as every decoder does."""
    view = memoryview(data)
    inflate = zlib.decompressobj()
    pos = len(PNG_SIGNATURE)
    while True:
        if pos + 8 > len(data):
            raise IntegrityError(f"PNG: file ends at byte {len(data)} before the IEND chunk (truncated)")
        length, kind = struct.unpack_from(">I4s", data, pos)
        name = kind.decode("ascii", "backslashreplace")
        end = pos + 12 + length
        if end > len(data):
            raise IntegrityError(f"PNG chunk {name}: file ends inside it (truncated)")
        if zlib.crc32(view[pos + 4:end - 4]) != struct.unpack_from(">I", data, end - 4)[0]:
            raise IntegrityError(f"PNG chunk {name}: CRC mismatch")
        if kind == b"IDAT":
            _inflate(inflate, view[pos + 8:end - 4])
        elif kind == b"IEND":
            break
        pos = end
    if not inflate.eof:
        raise IntegrityError("zlib: the IDAT stream ends before its end marker and Adler-32 check (truncated)")


def _inflate(inflate: zlib._Decompress, chunk: bytes | memoryview) -> None:
    """Feed one IDAT chunk to zlib, discarding the output in steps of at most _INFLATE_STEP bytes."""
    pending = bytes(chunk)
    try:
        while pending and not inflate.eof:
            inflate.decompress(pending, _INFLATE_STEP)
            pending = inflate.unconsumed_tail
    except zlib.error as exc:  # "Error -3 while decompressing data: incorrect data check"
        raise IntegrityError(f"zlib: {str(exc).rpartition('data: ')[2]}") from None


def check_gif(data: bytes) -> None:
    """The block structure up to the trailer byte: a GIF cut anywhere (even after its first frame) fails here.
    GIF has no checksum, so this finds truncation, not damaged pixels."""
    if len(data) < 13:
        raise IntegrityError("GIF: file ends inside its header (truncated)")
    pos = 13 + _colour_table(data[10])
    while pos < len(data):
        block = data[pos]
        if block == 0x3B:   # trailer
            return
        if block == 0x21:   # extension: label, then sub-blocks
            pos = _sub_blocks(data, pos + 2)
        elif block == 0x2C:  # image: 9-byte descriptor, local colour table, LZW code size, sub-blocks
            if pos + 10 > len(data):
                break
            pos = _sub_blocks(data, pos + 10 + _colour_table(data[pos + 9]) + 1)
        else:
            raise IntegrityError(f"GIF: unknown block 0x{block:02X} at byte {pos}")
    raise IntegrityError(f"GIF: file ends at byte {len(data)} before the trailer (truncated)")


def _colour_table(flags: int) -> int:
    return 3 * (2 << (flags & 7)) if flags & 0x80 else 0


def _sub_blocks(data: bytes, pos: int) -> int:
    """The position after a chain of data sub-blocks (each a length byte and that many bytes; 0 ends it)."""
    while pos < len(data):
        size = data[pos]
        pos += 1 + size
        if size == 0:
            return pos
    raise IntegrityError(f"GIF: file ends at byte {len(data)} inside a data block (truncated)")
