"""Real, tiny images for tests: a PNG of one pixel in a given colour (so two colours are
two different images with two different hashes), built with the standard library."""

from __future__ import annotations

import struct
import zlib

from seam.contracts.images import image_from_bytes
from seam.contracts.messages import ImagePart


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png(red: int = 200, green: int = 40, blue: int = 40, side: int = 1) -> bytes:
    """A `side` x `side` PNG filled with one colour."""
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    row = b"\x00" + bytes((red, green, blue)) * side
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(row * side))
        + _chunk(b"IEND", b"")
    )


def png_part(red: int = 200, green: int = 40, blue: int = 40) -> ImagePart:
    """`png(...)` as the `ImagePart` a surface makes of it."""
    return image_from_bytes(png(red, green, blue), "image/png")


__all__ = ["png", "png_part"]
