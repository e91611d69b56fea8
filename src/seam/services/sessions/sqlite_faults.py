"""Which SQLite failures are an outage rather than an error: another process held the
write lock past the busy timeout (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) or
the WAL index was being rebuilt under the connection (SQLITE_PROTOCOL). Those become
`StoreUnavailable` (see `seam.contracts.db`), still a `sqlite3.OperationalError`.

I/O errors and a full disk stay what they are: SQLite reports a full disk as an I/O
error too, and a disk that stays full should fail the turn visibly, not be waited out.
"""

from __future__ import annotations

import sqlite3

from seam.contracts.db import StoreUnavailable

_OUTAGE_CODES = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_PROTOCOL")


class SQLiteUnavailable(StoreUnavailable, sqlite3.OperationalError):
    """A locked database: a `StoreUnavailable` that is still a `sqlite3.OperationalError`."""


def is_outage(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.OperationalError) or isinstance(exc, StoreUnavailable):
        return False
    name = getattr(exc, "sqlite_errorname", None)
    if name is not None:
        return str(name).startswith(_OUTAGE_CODES)
    text = str(exc).lower()  # raised by hand, without the codes
    return "database is locked" in text or "database table is locked" in text


def unavailable(exc: sqlite3.OperationalError) -> SQLiteUnavailable:
    """The outage as the contract's error, with the driver's words (a one-line fault
    message matches on them) and codes."""
    out = SQLiteUnavailable(*exc.args)
    if hasattr(exc, "sqlite_errorname"):  # set by the driver, absent on one made by hand
        out.sqlite_errorcode = exc.sqlite_errorcode
        out.sqlite_errorname = exc.sqlite_errorname
    return out
