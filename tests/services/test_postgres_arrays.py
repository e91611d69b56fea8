"""Typed array parameters (`postgres_arrays`) read back by a real server as what was
sent: every item, NULLs where they were, an empty array, text beyond ASCII, bytes with
NUL in them, the largest integers, and floats from ints."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from psycopg import AsyncConnection

from seam.services.sessions.postgres_arrays import (
    BigintArray,
    BoolArray,
    ByteaArray,
    Float8Array,
    IntArray,
    TextArray,
)


@pytest.fixture
async def conn(postgres_url: str) -> AsyncIterator[AsyncConnection[Any]]:
    async with await AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        yield conn


CASES = [
    (TextArray, "text", ["a", None, "héllo ✓", "", 'quote " and \\ back']),
    (ByteaArray, "bytea", [b"\x00\x01nul", None, b"", "ü".encode()]),
    (BigintArray, "bigint", [0, -1, 2**63 - 1, -(2**63), None]),
    (IntArray, "integer", [0, 2**31 - 1, -(2**31), None]),
    (BoolArray, "boolean", [True, False, None]),
    (Float8Array, "double precision", [0.5, -1e300, None, 3]),
]


@pytest.mark.parametrize(("array", "element", "items"), CASES)
async def test_an_array_reads_back_as_sent(
    conn: AsyncConnection[Any], array: type[list[Any]], element: str, items: list[Any]
) -> None:
    for placeholder in ("%s", "%b"):
        cur = await conn.execute(
            f"SELECT x, pg_typeof(x)::text FROM (SELECT {placeholder}::{element}[] AS x) AS t",
            (array(items),),
        )
        row = await cur.fetchone()
        assert row is not None
        values, kind = row
        assert kind == f"{element}[]"
        assert [bytes(v) if isinstance(v, memoryview) else v for v in values] == items


@pytest.mark.parametrize(("array", "element", "items"), CASES)
async def test_an_empty_array_is_empty_and_unnests_to_no_rows(
    conn: AsyncConnection[Any], array: type[list[Any]], element: str, items: list[Any]
) -> None:
    cur = await conn.execute(
        f"SELECT %b::{element}[] = '{{}}', (SELECT count(*) FROM unnest(%b::{element}[]))",
        (array(), array()),
    )
    assert await cur.fetchone() == (True, 0)
