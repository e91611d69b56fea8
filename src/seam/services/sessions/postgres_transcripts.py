"""`load` on PostgreSQL through the kept transcript copies (`transcript_copies`).

Why: every turn loads its session's transcript, and read whole it is every message of
the session, decoded on the worker, every turn: 6 ms of a worker's CPU per turn for a
chat of 2,000 messages, however little the turn adds to it.

How: the load stays one statement and one round trip. It sends the stamp of the copy
this process holds; the server reads only the messages from the copy's count on when
the session's `cuts` and `created_at` still match it (nothing was cut, the session was
not made again), and the whole transcript otherwise, and says which it did. Another
worker's turns on the session are read as they are appended, so a session moving
between workers costs no whole read. `cuts` is counted by a statement trigger on
`messages` (`CUTS_MIGRATION`), whichever process or path deletes rows.

The store's own journal writes extend its copy (their statement returns the row's stamp
after them), and a claim returns its session's row and stamp (`LoadHint`): the load a
turn makes right after its claim is then no statement at all when the copy has that
stamp, which it has when this worker ran the session's last turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from seam.contracts.sessions import LoadedSession
from seam.services.sessions.claim_hints import LoadHint
from seam.services.sessions.postgres_rows import (
    Params,
    message_from_row,
    prefixed,
    session_from_row,
)
from seam.services.sessions.rows import MESSAGE_COLUMNS, SESSION_COLUMNS, wanted
from seam.services.sessions.transcript_copies import TranscriptCopies

# The schema change the copies rely on (a migration of `postgres_schema`). One UPDATE per
# statement that deletes messages (a rewind, a session deleted: its row is gone already).
CUTS_MIGRATION = (
    "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS cuts bigint NOT NULL DEFAULT 0",
    """CREATE OR REPLACE FUNCTION seam_count_cuts() RETURNS trigger
        LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        BEGIN
            UPDATE sessions AS s SET cuts = s.cuts + g.n
            FROM (SELECT session_key, count(*) AS n FROM gone GROUP BY session_key) AS g
            WHERE s.key = g.session_key;
            RETURN NULL;
        END $$""",
    "DROP TRIGGER IF EXISTS messages_cut ON messages",
    """CREATE TRIGGER messages_cut AFTER DELETE ON messages
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION seam_count_cuts()""",
)


_WIDTH = SESSION_COLUMNS.count(",") + 1
# The row, its cuts, whether the copy is extended (else the messages are the whole
# transcript), then the messages; a session with none is one row of NULL messages.
_SAME = "s.cuts = %(cuts)s AND s.created_at = %(created)s"
_LOAD = (
    f"SELECT {prefixed(SESSION_COLUMNS, 's')}, s.cuts, {_SAME}, m.idx,"
    f" {prefixed(MESSAGE_COLUMNS, 'm')}"
    " FROM sessions AS s LEFT JOIN messages AS m ON m.session_key = s.key"
    f" AND m.idx >= CASE WHEN {_SAME} THEN %(count)s ELSE 0 END"
    " WHERE s.key = %(key)s ORDER BY m.idx"
)
# What a load asks with no copy: `cuts` is never negative, so the whole transcript.
_NO_COPY = (0, -1, 0.0)


class PostgresTranscripts:
    """`load` through the copies (a mixin of `PostgresStore`)."""

    _transcripts: TranscriptCopies
    _load_hint: LoadHint | None

    if TYPE_CHECKING:

        async def _all(self, query: Any, params: Params = None) -> list[Any]: ...

        async def _load_with_images(self, key: str) -> LoadedSession | None: ...

    async def load(self, key: str) -> LoadedSession | None:
        copies = self._transcripts
        kept = copies.get(key)
        hint, self._load_hint = self._load_hint, None
        if kept is not None and hint is not None and hint.serves(key) and hint.stamp == kept.stamp:
            return LoadedSession(hint.session, kept.messages)  # as the claim saw it
        count, cuts, created = _NO_COPY if kept is None else kept.stamp
        found = await self._all(
            _LOAD, {"key": key, "count": count, "cuts": cuts, "created": created}
        )
        if not found:
            copies.drop(key)
            return None
        head = found[0]
        info = session_from_row(head[:_WIDTH])
        read = [message_from_row(row[_WIDTH + 3 :]) for row in found if row[_WIDTH + 2] is not None]
        if wanted(read):  # images are hydrated from their own table; such copies are not kept
            copies.drop(key)
            return await self._load_with_images(key)
        extended = kept is not None and bool(head[_WIDTH + 1])
        messages = (*kept.messages, *read) if kept is not None and extended else tuple(read)
        stamp = (info.message_count, int(head[_WIDTH]), info.created_at)
        if copies.keep(key, stamp, messages) or not extended:
            return LoadedSession(info, messages)
        # Only the tail was read, and it does not add up to the row's count (a row written
        # outside Seam): read it whole.
        return await self.load(key)
