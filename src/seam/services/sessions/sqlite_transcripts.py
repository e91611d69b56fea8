"""The transcripts of live sessions, kept in memory by the SQLite store between turns
(`transcript_copies` says why and what a copy's stamp is).

The store extends a copy with what its own journal writes add
(`ExecutionStore.append_for`, a settlement's journal), and on the next `load` reads only
the session's row to see whether the copy is still the file's: the row's stamp is the
one the copy was made at (or not even that, when the claim that just took the session
read the row: `claim_hints`). A write this store did not make through its
journal (a plain `append`, a compaction marker, another process's turn) moves the count
or the cuts, so the next load reads the transcript again; a journal write that finds the
stamp moved under it drops the copy instead of extending it.
"""

from __future__ import annotations

import sqlite3
from functools import partial

from seam.contracts.sessions import LoadedSession, SessionInfo
from seam.services.sessions.claim_hints import HintsUntilWrite
from seam.services.sessions.rows import SESSION_COLUMNS, session_from_row
from seam.services.sessions.sqlite_queries import SQLiteQueries
from seam.services.sessions.sqlite_threads import SQLiteThreads, snapshot
from seam.services.sessions.transcript_copies import (
    KeptTranscript,
    Stamp,
    TranscriptCopies,
    extends,
)

# What a journal write returns: the row's stamp after it appended its messages.
STAMP_COLUMNS = "message_count, cuts, created_at"

# The schema change the copies rely on (a migration of `sqlite_schema`).
CUTS_MIGRATION = (
    "ALTER TABLE sessions ADD COLUMN cuts INTEGER NOT NULL DEFAULT 0",
    """CREATE TRIGGER messages_cut AFTER DELETE ON messages
            BEGIN
                UPDATE sessions SET cuts = cuts + 1 WHERE key = old.session_key;
            END""",
)

_ROW_SQL = f"SELECT {SESSION_COLUMNS}, cuts FROM sessions WHERE key = ?"


class SQLiteTranscripts(SQLiteQueries):
    """`load` through the kept copies (a mixin of `SQLiteSessionStore`)."""

    _threads: SQLiteThreads
    _transcripts: TranscriptCopies
    _hints: HintsUntilWrite

    async def load(self, key: str) -> LoadedSession | None:
        copies = self._transcripts
        kept = copies.get(key)
        hint = self._hints.load(key, take=True)
        if kept is not None:
            if hint is not None and hint.stamp == kept.stamp:  # as the claim saw it
                return LoadedSession(hint.session, kept.messages)
            # One row by key on the loop's own connection: the copy is checked, not read.
            found = await self._threads.read_small(partial(row_and_stamp, key))
            if found is not None and found[1] == kept.stamp:
                return LoadedSession(found[0], kept.messages)
        loaded = await self._threads.read(partial(self._read, key, kept))
        if loaded is None:
            copies.drop(key)
            return None
        session, stamp = loaded
        copies.keep(key, stamp, session.messages)
        return session

    def _read(
        self, key: str, kept: KeptTranscript | None, db: sqlite3.Connection
    ) -> tuple[LoadedSession, Stamp] | None:
        """The transcript in one snapshot: the copy and the messages appended after it
        when it is still the transcript's start (nothing cut since, the same session, as
        when another process ran the session's turns), else the whole transcript."""
        with snapshot(db):
            found = row_and_stamp(key, db)
            if found is None:
                return None
            info, stamp = found
            if kept is not None and extends(kept.stamp, stamp):
                messages = (*kept.messages, *self._messages_of(db, key, kept.stamp[0]))
                if len(messages) == info.message_count:
                    return LoadedSession(info, messages), stamp
            messages = tuple(self._messages_of(db, key))
        return LoadedSession(info, messages), stamp


def row_and_stamp(key: str, db: sqlite3.Connection) -> tuple[SessionInfo, Stamp] | None:
    row = db.execute(_ROW_SQL, (key,)).fetchone()
    if row is None:
        return None
    info = session_from_row(row[:-1])
    return info, (info.message_count, int(row[-1]), info.created_at)
