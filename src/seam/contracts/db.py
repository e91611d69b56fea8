"""The database lifecycle: open a database, bring its schema up to date, keep it healthy.

A store owns the queries; its `DbConnector` owns the file or server behind them. Kept
apart so `seam doctor`, a maintenance job or a test can check and tidy a database
without knowing a store's tables.

Schema versions are counted migrations: version N means the first N migrations were
applied, each exactly once and in order, also when several processes open a new
database at the same moment. A database newer than the code refuses to open (its newer
tables would be written to by code that does not know them).

Synchronous on purpose: these run at start-up and in maintenance, never on a request
path, and a constructor can call them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class SchemaTooNew(RuntimeError):
    """The database was written by a newer version than this code knows."""


class StoreUnavailable(RuntimeError):
    """The store cannot be reached for now: its connection dropped, its server is
    restarting or in recovery, its file is locked past the busy timeout. Nothing about
    the call was wrong and the same call may succeed in a moment, so a caller that can
    wait (the Coordinator) backs off and tries again instead of failing the work.

    Whether a write that failed this way was applied is unknown (the connection may have
    dropped after the commit): read the state back before doing it again. A backend
    raises a subclass that is also its driver's own exception type, so code that knows
    the driver (a one-line fault message) still recognises it."""


@runtime_checkable
class DbConnector(Protocol):
    @property
    def schema_version(self) -> int:
        """The version this code brings a database to (the number of migrations)."""
        ...

    def open(self) -> None:
        """Connect (idempotent). Does not migrate: call `migrate`."""
        ...

    def close(self) -> None:
        """Disconnect (idempotent)."""
        ...

    def version(self) -> int:
        """The schema version of the open database."""
        ...

    def migrate(self) -> int:
        """Apply the missing migrations, each in its own transaction; returns how many ran.
        Raises SchemaTooNew for a database from a newer version."""
        ...

    def integrity_check(self) -> list[str]:
        """Problems found in the database (structure, foreign keys, search indexes); an
        empty list when everything is fine."""
        ...

    def checkpoint(self) -> bool:
        """Fold the write-ahead log into the database and truncate it; False when readers
        kept part of it from being folded (try again later). A no-op True where the
        database has no such log."""
        ...
