"""Finding, reading back and looking after past sessions on PostgreSQL: the part of
`SessionStore` beyond create/append/search (a mixin of `PostgresStore`, kept apart for
size).

Reads that combine several tables (`load`, `export`, `export_all`, `list_rich`) see one
snapshot, so a concurrent append never shows up in the transcript but not in the count.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection, errors

from seam.contracts.messages import Message
from seam.contracts.sessions import (
    DuplicateTitle,
    LoadedSession,
    SessionInfo,
    SessionNotFound,
    SessionSummary,
    UsageTotals,
    check_idle,
    check_limit,
    check_title,
    lineage_base,
    next_lineage_title,
    preview_line,
    session_to_dict,
)
from seam.services.sessions.postgres_images import sweep_images, with_images
from seam.services.sessions.postgres_rows import (
    Params,
    message_from_row,
    prefixed,
    session_from_row,
)
from seam.services.sessions.rows import MESSAGE_COLUMNS, SESSION_COLUMNS, usage_totals_from

SECONDS_PER_DAY = 86_400.0

# Usage totals per session, as the columns after `session_key` of `_USAGE_BY_SESSION`.
_USAGE_SUMS = (
    "count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),"
    " coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),"
    " coalesce(sum(reasoning_tokens), 0), coalesce(sum(cost_usd), 0),"
    " count(*) - count(cost_usd)"
)


class PostgresUpkeep:
    """Mixed into `PostgresStore`, which provides the pool, the clock and the helpers."""

    _clock: Callable[[], float]

    if TYPE_CHECKING:

        def _connection(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        def _snapshot(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        async def _one(self, query: Any, params: Params = None) -> Any: ...

        async def _all(self, query: Any, params: Params = None) -> list[Any]: ...

        async def get(self, key: str) -> SessionInfo | None: ...

    async def _load_with_images(self, key: str) -> LoadedSession | None:
        async with self._snapshot() as conn:
            info = await _info(conn, key)
            if info is None:
                return None
            messages = await _transcript(conn, key)
        return LoadedSession(info, tuple(messages))

    async def next_title(self, title: str) -> str:
        check_title(title)
        base = lineage_base(title)
        async with self._connection() as conn:
            return next_lineage_title(base, await _lineage(conn, base))

    async def set_next_title(self, key: str, title: str) -> str | None:
        """Callers numbering one lineage take turns on an advisory lock held to the end of
        their transaction, so each reads the titles the one before committed (READ
        COMMITTED: every statement sees what committed before it began). Only a plain
        `set_title` or `create` taking the picked title meanwhile makes a try fail."""
        check_title(title)
        base = lineage_base(title)
        for _ in range(TITLE_TRIES):
            try:
                async with self._tx() as conn:
                    return await _set_next_title(conn, key, base)
            except errors.UniqueViolation:
                continue
        raise DuplicateTitle(f"every title tried for session {key!r} was taken meanwhile")

    async def touch(self, key: str) -> None:
        await self._update_one(key, "UPDATE sessions SET updated_at = %s WHERE key = %s")

    async def end(self, key: str) -> None:
        # The first end is kept; ending is not activity, so updated_at stays.
        await self._update_one(
            key,
            "UPDATE sessions SET ended = true, ended_at = coalesce(ended_at, %s) WHERE key = %s",
        )

    async def end_idle(self, idle_seconds: float) -> int:
        check_idle(idle_seconds)
        async with self._tx() as conn:
            cur = await conn.execute(
                "UPDATE sessions SET ended = true, ended_at = updated_at + %s"
                " WHERE NOT ended AND updated_at < %s",
                (idle_seconds, self._clock() - idle_seconds),
            )
            return cur.rowcount

    async def list_rich(self, limit: int = 50) -> list[SessionSummary]:
        check_limit(limit)
        rows = await self._all(
            f"SELECT {prefixed(SESSION_COLUMNS, 's')}, m.users, m.assistants, m.tools,"
            f" u.*, p.content FROM sessions AS s"
            " CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE role = 'user') AS users,"
            "   count(*) FILTER (WHERE role = 'assistant') AS assistants,"
            "   count(*) FILTER (WHERE role = 'tool') AS tools"
            "   FROM messages WHERE session_key = s.key) AS m"
            f" CROSS JOIN LATERAL (SELECT {_USAGE_SUMS} FROM usage"
            "   WHERE session_key = s.key) AS u"
            " LEFT JOIN LATERAL (SELECT content FROM messages"
            "   WHERE session_key = s.key AND role = 'user' ORDER BY idx LIMIT 1) AS p ON true"
            ' ORDER BY s.updated_at DESC, s.key COLLATE "C" LIMIT %s',
            (limit,),
        )
        width = SESSION_COLUMNS.count(",") + 1
        summaries = []
        for row in rows:
            users, assistants, tools = row[width : width + 3]
            first = row[-1]
            summaries.append(
                SessionSummary(
                    session_from_row(row[:width]),
                    users,
                    assistants,
                    tools,
                    usage_totals_from(row[width + 3 : -1]),
                    "" if first is None else preview_line(bytes(first).decode()),
                )
            )
        return summaries

    async def list_recently_active(self, since: float, limit: int = 50) -> list[SessionInfo]:
        check_limit(limit)
        rows = await self._all(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE updated_at >= %s"
            ' ORDER BY updated_at DESC, key COLLATE "C" LIMIT %s',
            (since, limit),
        )
        return [session_from_row(row) for row in rows]

    async def session_for_message(self, message_id: int) -> SessionInfo | None:
        row = await self._one(
            f"SELECT {prefixed(SESSION_COLUMNS, 's')} FROM messages AS m"
            " JOIN sessions AS s ON s.key = m.session_key WHERE m.id = %s",
            (message_id,),
        )
        return None if row is None else session_from_row(row)

    async def resolve_root(self, key: str) -> SessionInfo:
        info = await self.get(key)
        if info is None:
            raise SessionNotFound(f"no session {key!r}")
        seen = {info.key}
        while info.parent_key is not None and info.parent_key not in seen:
            parent = await self.get(info.parent_key)
            if parent is None:
                break
            seen.add(parent.key)
            info = parent
        return info

    async def export(self, key: str) -> dict[str, Any]:
        async with self._snapshot() as conn:
            info = await _info(conn, key)
            if info is None:
                raise SessionNotFound(f"no session {key!r}")
            messages = await _transcript(conn, key)
            cur = await conn.execute(
                f"SELECT {_USAGE_SUMS} FROM usage WHERE session_key = %s", (key,)
            )
            usage = usage_totals_from(await cur.fetchone())  # type: ignore[arg-type]
        return session_to_dict(info, messages, usage)

    async def export_all(self) -> list[dict[str, Any]]:
        async with self._snapshot() as conn:
            cur = await conn.execute(
                f'SELECT {SESSION_COLUMNS} FROM sessions ORDER BY created_at, key COLLATE "C"'
            )
            infos = [session_from_row(row) for row in await cur.fetchall()]
            cur = await conn.execute(
                f"SELECT session_key, {MESSAGE_COLUMNS} FROM messages ORDER BY session_key, idx"
            )
            transcripts: dict[str, list[Message]] = {}
            for row in await cur.fetchall():
                transcripts.setdefault(row[0], []).append(message_from_row(row[1:]))
            for key, transcript in transcripts.items():
                transcripts[key] = await with_images(conn, transcript)
            cur = await conn.execute(
                f"SELECT session_key, {_USAGE_SUMS} FROM usage GROUP BY session_key"
            )
            usage = {row[0]: usage_totals_from(row[1:]) for row in await cur.fetchall()}
        return [
            session_to_dict(info, transcripts.get(info.key, []), usage.get(info.key, UsageTotals()))
            for info in infos
        ]

    async def prune(self, older_than_days: float) -> int:
        if not older_than_days >= 0:  # also refuses NaN
            raise ValueError(f"older_than_days must be >= 0, got {older_than_days}")
        cutoff = self._clock() - older_than_days * SECONDS_PER_DAY
        # Age is the later of the last activity and the end. Everything else goes by cascade.
        async with self._tx() as conn:
            cur = await conn.execute(
                "DELETE FROM sessions WHERE ended"
                " AND greatest(updated_at, coalesce(ended_at, updated_at)) < %s",
                (cutoff,),
            )
            if cur.rowcount:
                await sweep_images(conn)  # the images no session left shows
            return cur.rowcount

    async def undo(self, key: str, turns: int = 1) -> int:
        if turns < 0:
            raise ValueError(f"turns must be >= 0, got {turns}")
        async with self._tx() as conn:
            # Locking the row queues undo with appends to the same session.
            cur = await conn.execute("SELECT 1 FROM sessions WHERE key = %s FOR UPDATE", (key,))
            if await cur.fetchone() is None:
                raise SessionNotFound(f"no session {key!r}")
            if not turns:
                return 0
            # The turns-th user message from the end, or the first one when there are fewer.
            cur = await conn.execute(
                "SELECT coalesce("
                " (SELECT idx FROM messages WHERE session_key = %(key)s AND role = 'user'"
                "  ORDER BY idx DESC OFFSET %(back)s LIMIT 1),"
                " (SELECT min(idx) FROM messages WHERE session_key = %(key)s AND role = 'user'))",
                {"key": key, "back": turns - 1},
            )
            row = await cur.fetchone()
            cut = None if row is None else row[0]
            if cut is None:
                return 0
            cur = await conn.execute(
                "DELETE FROM messages WHERE session_key = %s AND idx >= %s", (key, cut)
            )
            removed = cur.rowcount
            await conn.execute(
                "UPDATE sessions SET message_count = %s, updated_at = %s WHERE key = %s",
                (cut, self._clock(), key),
            )
        return removed

    async def _update_one(self, key: str, statement: Any) -> None:
        """Run `statement` with (now, key); SessionNotFound when it changed no row."""
        async with self._tx() as conn:
            cur = await conn.execute(statement, (self._clock(), key))
            if cur.rowcount == 0:
                raise SessionNotFound(f"no session {key!r}")


# Tries `set_next_title` makes when another writer takes the title it picked.
TITLE_TRIES = 5

# `base` if taken, and its lineage's highest "base #N" (N = [1-9][0-9]*): one row each.
_LINEAGE_SQL = """
SELECT title FROM sessions WHERE title = %(base)s
UNION ALL
(SELECT title FROM sessions
  WHERE starts_with(title, %(prefix)s) AND substr(title, %(at)s) ~ '^[1-9][0-9]*$'
  ORDER BY length(title) DESC, title COLLATE "C" DESC LIMIT 1)
"""


async def _lineage(conn: AsyncConnection[Any], base: str) -> list[str]:
    params = {"base": base, "prefix": f"{base} #", "at": len(base) + 3}
    cur = await conn.execute(_LINEAGE_SQL, params)
    return [row[0] for row in await cur.fetchall()]


async def _set_next_title(conn: AsyncConnection[Any], key: str, base: str) -> str | None:
    """`set_next_title`'s transaction on `conn`."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('seam_title:' || %s, 0))", (base,)
    )
    cur = await conn.execute("SELECT title FROM sessions WHERE key = %s FOR UPDATE", (key,))
    row = await cur.fetchone()
    if row is None:
        raise SessionNotFound(f"no session {key!r}")
    if row[0] is not None:
        return None
    free = next_lineage_title(base, await _lineage(conn, base))
    await conn.execute("UPDATE sessions SET title = %s WHERE key = %s", (free, key))
    return free


async def _info(conn: AsyncConnection[Any], key: str) -> SessionInfo | None:
    cur = await conn.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE key = %s", (key,))
    row = await cur.fetchone()
    return None if row is None else session_from_row(row)


async def _transcript(conn: AsyncConnection[Any], key: str) -> list[Message]:
    cur = await conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_key = %s ORDER BY idx", (key,)
    )
    return await with_images(conn, [message_from_row(row) for row in await cur.fetchall()])
