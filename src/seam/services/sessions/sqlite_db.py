"""`SQLiteDb`: the `DbConnector` of one SQLite file (WAL mode, foreign keys on).

Migrations are lists of statements; `PRAGMA user_version` counts how many have run. Each
one runs in its own `BEGIN IMMEDIATE` transaction and the version is read inside that
write lock, so two processes opening a new file together apply every migration exactly
once, and a crash mid-migration leaves the file at the previous version.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from seam.contracts.db import SchemaTooNew

Migration = Sequence[str]


class SQLiteDb:
    """Opens `path` (or ":memory:") and migrates it with `migrations`.

    `connection` is the one connection a store runs its statements on; it is used in
    autocommit mode (`isolation_level=None`), so transactions are explicit `BEGIN`s.
    `busy_timeout` is how long a statement waits for another process's write lock.
    """

    def __init__(
        self,
        path: str,
        migrations: Sequence[Migration],
        *,
        busy_timeout: float = 5.0,
        label: str = "database",
    ) -> None:
        self.path = path
        self._migrations = tuple(tuple(m) for m in migrations)
        self._busy_timeout = busy_timeout
        self._label = label
        self._db: sqlite3.Connection | None = None

    @property
    def schema_version(self) -> int:
        return len(self._migrations)

    @property
    def connection(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError(f"{self._label} {self.path} is not open")
        return self._db

    def open(self) -> None:
        if self._db is not None:
            return
        db = sqlite3.connect(
            self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            _enable_wal(db, self._busy_timeout)
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            db.close()
            raise
        self._db = db

    def open_reader(self) -> sqlite3.Connection:
        """Another connection to the file, for reads only (`PRAGMA query_only`): in WAL
        mode it reads beside the writer without waiting for it. Closing it is the
        caller's job."""
        db = sqlite3.connect(
            self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            db.execute("PRAGMA query_only = ON")
        except BaseException:
            db.close()
            raise
        return db

    def open_loop(self) -> sqlite3.Connection:
        """Another connection to the file, for the event loop's own thread
        (`sqlite_inline`): `busy_timeout` 0 (a statement that would wait for a lock fails
        at once instead), no automatic WAL checkpoint (it waits for the disk). Closing it is
        the caller's job."""
        db = sqlite3.connect(self.path, timeout=0, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("PRAGMA wal_autocheckpoint = 0")
        except BaseException:
            db.close()
            raise
        return db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def version(self) -> int:
        version: int = self.connection.execute("PRAGMA user_version").fetchone()[0]
        return version

    def migrate(self) -> int:
        db = self.connection
        applied = 0
        while True:
            db.execute("BEGIN IMMEDIATE")
            try:
                version = self.version()
                if version > self.schema_version:
                    raise SchemaTooNew(
                        f"{self._label} {self.path} has schema version {version}, newer than "
                        f"this Seam supports ({self.schema_version})"
                    )
                if version == self.schema_version:
                    db.execute("COMMIT")
                    return applied
                for statement in self._migrations[version]:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {version + 1}")
                db.execute("COMMIT")
                applied += 1
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def integrity_check(self) -> list[str]:
        """SQLite's own check, dangling foreign keys, and every FTS5 index against its
        content (a search index out of step with its rows finds wrong messages)."""
        db = self.connection
        problems = [
            row[0] for row in db.execute("PRAGMA integrity_check").fetchall() if row[0] != "ok"
        ]
        for table, rowid, parent, _ in db.execute("PRAGMA foreign_key_check").fetchall():
            problems.append(f"{table} row {rowid} refers to a missing {parent} row")
        fts_tables = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5%'"
        ).fetchall()
        for (table,) in fts_tables:
            quoted = '"' + table.replace('"', '""') + '"'
            try:
                db.execute(f"INSERT INTO {quoted} ({quoted}, rank) VALUES ('integrity-check', 1)")
            except sqlite3.DatabaseError as exc:
                problems.append(f"search index {table}: {exc}")
        return problems

    def checkpoint(self) -> bool:
        busy: int = self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return busy == 0


def _enable_wal(db: sqlite3.Connection, busy_timeout: float) -> None:
    """Switch to WAL, waiting out other openers.

    Changing the journal mode takes an exclusive lock and SQLite reports a clash as
    "database is locked" at once, without consulting the busy timeout, so several
    processes opening a new file together would fail without this retry.
    """
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
