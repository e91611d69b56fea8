"""Lists sent as binary PostgreSQL arrays of a type known in advance.

Why: a turn's settlement sends its rows as about twenty parallel arrays (`unnest`, see
`postgres_journal`), and psycopg adapts a plain `list` by looking at its items first
(which element type, which sub-dumper, an upgrade per list): 84 us of a settlement's
conversion against 27 us with these, on the one process that runs every turn of a
worker. `TextArray(["a", None])` says the type, and its dumper writes the binary array
(`array_send`'s layout: dimensions, a NULL flag, the element type, then each item as its
length and bytes, -1 for NULL) in one pass.

The dumpers are registered on psycopg's global adapters when this module is imported
(before any connection is made: connections copy that map), for these classes alone.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any

import psycopg
from psycopg.adapt import Dumper
from psycopg.postgres import types
from psycopg.pq import Format

_LENGTH = struct.Struct("!i")
_NULL = _LENGTH.pack(-1)
_HEADER = struct.Struct("!iiIii")  # dimensions, has NULLs, element oid, length, lower bound
_EMPTY = struct.Struct("!iiI")  # no dimensions, no NULLs, element oid
_INT8 = struct.Struct("!iq")  # each item: its length (8) and value
_INT4 = struct.Struct("!ii")
_FLOAT8 = struct.Struct("!id")
_TRUE, _FALSE = b"\x00\x00\x00\x01\x01", b"\x00\x00\x00\x01\x00"


def _text(item: str) -> bytes:
    data = item.encode()
    return _LENGTH.pack(len(data)) + data


def _bytea(item: bytes) -> bytes:
    return _LENGTH.pack(len(item)) + item


def _bool(item: bool) -> bytes:
    return _TRUE if item else _FALSE


class TextArray(list[str | None]):
    """A `text[]` parameter."""


class ByteaArray(list[bytes | None]):
    """A `bytea[]` parameter."""


class BigintArray(list[int | None]):
    """A `bigint[]` parameter."""


class IntArray(list[int | None]):
    """An `integer[]` parameter."""


class BoolArray(list[bool | None]):
    """A `boolean[]` parameter."""


class Float8Array(list[float | None]):
    """A `double precision[]` parameter (an int item is sent as its float)."""


def _dumper(element: str, item: Callable[[Any], bytes]) -> type[Dumper]:
    """A binary dumper of one-dimensional arrays of `element`, each item by `item`."""
    info = types.get(element)
    if info is None:  # pragma: no cover - psycopg knows every built-in type
        raise LookupError(element)
    oid = info.oid

    class ArrayDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Iterable[Any]) -> bytes:
            parts = [b""]
            nulls = 0
            for value in obj:
                if value is None:
                    parts.append(_NULL)
                    nulls = 1
                else:
                    parts.append(item(value))
            if len(parts) == 1:
                return _EMPTY.pack(0, 0, oid)
            parts[0] = _HEADER.pack(1, nulls, oid, len(parts) - 1, 1)
            return b"".join(parts)

    ArrayDumper.oid = info.array_oid
    ArrayDumper.__qualname__ = ArrayDumper.__name__ = f"{element.title()}ArrayDumper"
    return ArrayDumper


_DUMPERS: tuple[tuple[type, str, Callable[[Any], bytes]], ...] = (
    (TextArray, "text", _text),
    (ByteaArray, "bytea", _bytea),
    (BigintArray, "int8", lambda value: _INT8.pack(8, value)),
    (IntArray, "int4", lambda value: _INT4.pack(4, value)),
    (BoolArray, "bool", _bool),
    (Float8Array, "float8", lambda value: _FLOAT8.pack(8, value)),
)
for _cls, _element, _item in _DUMPERS:
    psycopg.adapters.register_dumper(_cls, _dumper(_element, _item))
