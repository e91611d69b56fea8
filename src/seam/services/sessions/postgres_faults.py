"""Which PostgreSQL failures are an outage rather than an error: the connection dropped
("server closed the connection unexpectedly"), the server shut down or crashed under a
session (57P01, 57P02), it is starting up or in recovery (57P03), a connection-class error
(08xxx), too many connections (53300), the server ended a session left idle in a
transaction (25P03, `IDLE_IN_TRANSACTION_SECONDS` in `postgres`), or the pool could not
hand out a connection in time. Those become `StoreUnavailable` (see `seam.contracts.db`);
a wrong query, a constraint, a closed store stay what they are.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolClosed

from seam.contracts.db import StoreUnavailable

log = logging.getLogger(__name__)

# SQLSTATEs of a server that is going away or not there yet, besides class 08.
_OUTAGE_STATES = frozenset({"57P01", "57P02", "57P03", "53300", "25P03"})

# What may carry an outage: the connection-class errors, and the server ending a session
# idle in a transaction (an InternalError to psycopg, though its connection is gone).
OUTAGE_ERRORS = (psycopg.OperationalError, psycopg.errors.IdleInTransactionSessionTimeout)


class PostgresUnavailable(StoreUnavailable, psycopg.OperationalError):
    """A PostgreSQL outage: a `StoreUnavailable` that is still a `psycopg.OperationalError`."""


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` says the server is unreachable for now (see the module docstring)."""
    if not isinstance(exc, OUTAGE_ERRORS) or isinstance(exc, PoolClosed):
        return False
    state = exc.sqlstate
    # No SQLSTATE: the client lost the connection (or never got one); the server said
    # nothing because it could not.
    return state is None or state.startswith("08") or state in _OUTAGE_STATES


def unavailable(exc: psycopg.Error) -> PostgresUnavailable:
    """The outage as the contract's error, saying what the driver said."""
    said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return PostgresUnavailable(f"PostgreSQL is unavailable: {said}")


def check_pool(pool: AsyncConnectionPool[Any]) -> asyncio.Task[None]:
    """Test the pool's idle connections in the background, replacing the ones the server
    dropped; a check that fails is only logged (the next caller meets the outage)."""
    task = asyncio.create_task(pool.check())
    task.add_done_callback(_checked)
    return task


def _checked(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("PostgreSQL pool check failed: %s", task.exception())
