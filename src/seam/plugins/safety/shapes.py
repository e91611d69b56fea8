"""A cheap first look at a text's shape, so the costlier scans run only where they can hit.

CPython's regex engine spends tens of nanoseconds on each character it tries; a byte
translation and a substring search cost about one. `shape(text)` maps each base64 (or
hex) character to 1, each line break to 2 and everything else to 0, so "has this text a
run of 32 base64 characters" is a plain `in` test on the result.
"""

from __future__ import annotations

import string

ENCODED = 1
BREAK = 2
_TABLE = bytes(
    ENCODED
    if chr(i) in string.ascii_letters + string.digits + "+/"
    else BREAK
    if chr(i) in "\r\n"
    else 0
    for i in range(256)
)


def shape(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass").translate(_TABLE)


def has_run(shaped: bytes, length: int) -> bool:
    """A run of `length` base64 characters (`+` and `/` included, `-`, `_`, `=` not)."""
    return bytes((ENCODED,)) * length in shaped
