"""A real PostgreSQL server for the tests: a throwaway database per test session
(`postgres_url`) and a fresh schema per test (`postgres_schema`), dropped afterwards.

The server is the one `SEAM_TEST_PG_URL` names (scripts/test exports it from
`scripts/ensure-postgres`); when it is unset the fixture runs that script itself. No
server is a failure with the script's explanation, never a skip.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

ENSURE_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ensure-postgres"


def _server_url() -> str:
    url = os.environ.get("SEAM_TEST_PG_URL")
    if url:
        return url
    try:
        proc = subprocess.run(
            [str(ENSURE_SCRIPT)], capture_output=True, text=True, timeout=900, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"PostgreSQL tests need a server: {ENSURE_SCRIPT} did not run: {exc}")
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        pytest.fail(
            "PostgreSQL tests need a server and scripts/ensure-postgres could not provide one"
            f" (exit {proc.returncode}); set SEAM_TEST_PG_URL to a superuser URL.\n"
            f"{proc.stderr.strip()}"
        )
    return lines[-1]


def _admin(url: str) -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL tests cannot connect to the test server: {exc}")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A connection string to an empty database made for this test session."""
    server = _server_url()
    name = f"seam_test_{secrets.token_hex(6)}"
    with _admin(server) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(server, dbname=name)
    finally:
        with _admin(server) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """A schema name no other test uses (a store creates it on open); dropped after."""
    name = f"t_{secrets.token_hex(6)}"
    yield name
    with _admin(postgres_url) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
