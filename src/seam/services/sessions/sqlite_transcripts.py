"""The transcripts of live sessions, kept in memory by the SQLite store between turns.

Every turn loads its session's row and whole transcript (`load`). Read from the file,
that is O(messages) rows decoded from JSON on a reader thread, every turn, for a
transcript this process itself wrote a moment before. So the store keeps the last
transcript it loaded of each recently used session, extends it with what its own
journal writes add (`ExecutionStore.append_for`, a settlement's journal), and on the
next `load` reads only the session's row to see whether the copy is still the file's.

The copy is the file's when the row's stamp is the one the copy was made at:
`message_count` (messages are only ever appended or cut from the end, never edited),
`cuts` (bumped by a trigger for every message deleted, whichever process or path
deletes it: an undo, a rewind, an edit from the web page) and `created_at` (a session
deleted and made again under the same key). A write this store did not make through its
journal (a plain `append`, a compaction marker, another process's turn) moves the count
or the cuts, so the next load reads the transcript again; a journal write that finds the
stamp moved under it drops the copy instead of extending it.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from seam.contracts.messages import Message
from seam.contracts.sessions import LoadedSession, SessionInfo
from seam.services.sessions.rows import SESSION_COLUMNS, session_from_row
from seam.services.sessions.sqlite_queries import SQLiteQueries
from seam.services.sessions.sqlite_threads import SQLiteThreads, snapshot

# Sessions whose transcripts are kept, and their messages in all (least recently loaded
# dropped first): a worker serves many sessions, and any copy can be read again.
KEPT_SESSIONS = 128
KEPT_MESSAGES = 100_000

# (message_count, cuts, created_at): a transcript as a session's row stamps it.
Stamp = tuple[int, int, float]

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


@dataclass(frozen=True, slots=True)
class _Kept:
    stamp: Stamp
    messages: tuple[Message, ...]


class TranscriptCopies:
    """The kept transcripts, newest last."""

    def __init__(self, size: int = KEPT_SESSIONS, messages: int = KEPT_MESSAGES) -> None:
        self._size = size
        self._most = messages
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._messages = 0  # in all the copies

    def get(self, key: str) -> _Kept | None:
        """The copy of `key`'s transcript, now the most recently used; None if none."""
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
        return kept

    def keep(self, key: str, stamp: Stamp, messages: tuple[Message, ...]) -> None:
        self.drop(key)
        kept = self._kept
        kept[key] = _Kept(stamp, messages)
        self._messages += len(messages)
        while len(kept) > self._size or (self._messages > self._most and len(kept) > 1):
            _, oldest = kept.popitem(last=False)
            self._messages -= len(oldest.messages)

    def appended(self, key: str, stamp: Stamp | None, messages: Sequence[Message]) -> None:
        """This store committed `messages` to `key`'s transcript, leaving the row at
        `stamp`: extend the copy when it was the file's just before, else drop it."""
        kept = self._kept.get(key)
        if kept is None or not messages:
            return
        count, cuts, created = kept.stamp
        if stamp != (count + len(messages), cuts, created) or any(m.images for m in messages):
            # Moved under it (or images, which a read hydrates from their own table).
            self.drop(key)
            return
        self._kept[key] = _Kept(stamp, (*kept.messages, *messages))
        self._messages += len(messages)

    def drop(self, key: str) -> None:
        gone = self._kept.pop(key, None)
        if gone is not None:
            self._messages -= len(gone.messages)


class SQLiteTranscripts(SQLiteQueries):
    """`load` through the kept copies (a mixin of `SQLiteSessionStore`)."""

    _threads: SQLiteThreads
    _transcripts: TranscriptCopies

    async def load(self, key: str) -> LoadedSession | None:
        copies = self._transcripts
        kept = copies.get(key)
        if kept is not None:
            # One row by key on the loop's own connection: the copy is checked, not read.
            found = await self._threads.read_small(partial(_row_and_stamp, key))
            if found is not None and found[1] == kept.stamp:
                return LoadedSession(found[0], kept.messages)
        loaded = await self._threads.read(partial(self._read_whole, key))
        if loaded is None:
            copies.drop(key)
            return None
        session, stamp = loaded
        copies.keep(key, stamp, session.messages)
        return session

    def _read_whole(self, key: str, db: sqlite3.Connection) -> tuple[LoadedSession, Stamp] | None:
        with snapshot(db):
            found = _row_and_stamp(key, db)
            if found is None:
                return None
            messages = self._messages_of(db, key)
        return LoadedSession(found[0], tuple(messages)), found[1]


def _row_and_stamp(key: str, db: sqlite3.Connection) -> tuple[SessionInfo, Stamp] | None:
    row = db.execute(_ROW_SQL, (key,)).fetchone()
    if row is None:
        return None
    info = session_from_row(row[:-1])
    return info, (info.message_count, int(row[-1]), info.created_at)
