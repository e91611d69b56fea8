"""Wake-ups for the PostgreSQL store: one LISTEN connection per store, a mixin of
`PostgresStore`.

Apart from the store because it is its own small machine: a dedicated connection (not
from the pool) that listens on the submission and approval channels, turns each
notification into the matching local wake-up, and reconnects with back-off when the
server goes away. The store's reads and writes never depend on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import AsyncConnection, Notify
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool

from seam.services.sessions.postgres_channels import (
    APPROVALS_CHANNEL,
    CHANNEL,
    CONNECT_TIMEOUT,
    NOTIFY_RELAXED,
    outbox_note,
    wait_and_clear,
)

# Seconds a settlement's notification waits for this worker's next claim to carry it.
NOTE_DELAY = 0.005

# The store's logger: the listener's warnings read as the store's, as they always have.
log = logging.getLogger("seam.services.sessions.postgres")


class PostgresListener:
    _url: str
    _schema: str
    _wake: asyncio.Event
    _outbox_wake: asyncio.Event
    _listener: asyncio.Task[None] | None
    _listening: asyncio.Future[None] | None
    _pool: AsyncConnectionPool[Any]
    _note_owed: bool
    _note_sender: asyncio.Future[None] | None

    if TYPE_CHECKING:

        def _approvals_noted(self) -> None: ...

        def _connection(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

    async def _notify(self, conn: AsyncConnection[Any]) -> None:
        """Wake idle workers everywhere (delivered when the transaction commits) and here."""
        await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, self._schema))
        self._wake.set()

    def _owe_note(self) -> None:
        """A settlement committed: wake waiters here at once, and everywhere soon.

        Not in the settlement's own transaction: PostgreSQL queues every committing
        transaction that sent a NOTIFY behind one lock, held from before its commit record
        to the end of its commit, so a settlement that notified held it through its WAL
        flush, and the settlements of all workers queued up behind each other. Nor in a
        transaction of its own at once, which cost a round trip per submission: a worker
        claims again as soon as it settles, so its next claim carries the NOTIFY in the
        claim's transaction (which does not wait for the flush); when no claim comes
        within NOTE_DELAY, it goes alone. A worker that stops meanwhile leaves work
        nobody was told of; idle workers find it at their periodic look, as they find
        expired leases.
        """
        self._wake.set()
        if not self._note_owed:
            self._note_owed = True
            asyncio.get_running_loop().call_later(NOTE_DELAY, self._note_overdue)

    def _take_note(self) -> str | None:
        """The payload of the notification owed, for a claim to send (None: none)."""
        if not self._note_owed:
            return None
        self._note_owed = False
        return self._schema

    def _note_overdue(self) -> None:
        if self._note_owed and not self._pool.closed:
            self._note_owed = False
            self._note_sender = asyncio.ensure_future(self._send_note())

    async def _send_note(self) -> None:
        try:
            async with self._connection() as conn:
                await conn.execute(NOTIFY_RELAXED, (CHANNEL, self._schema))
        except Exception as exc:  # a hint lost: the periodic look finds the work
            log.warning("PostgreSQL store could not notify other workers (%s)", exc)

    async def _send_owed_note(self) -> None:
        """Before the pool closes: send what is owed, wait for what is on its way."""
        if self._take_note() is not None:
            await self._send_note()
        if self._note_sender is not None:
            with contextlib.suppress(Exception):
                await self._note_sender

    async def _ensure_listening(self) -> None:
        """Start the LISTEN connection once; returns when it is listening.

        Started by the first `claim` or `wait_for_work`, before either looks at the queue,
        so a notification sent after a worker found nothing is never missed.
        """
        if self._listener is None or self._listener.done():
            self._listening = asyncio.get_running_loop().create_future()
            self._listener = asyncio.create_task(self._listen(self._listening))
        assert self._listening is not None
        await asyncio.shield(self._listening)

    async def _listen(self, listening: asyncio.Future[None]) -> None:
        backoff = 0.1
        while True:
            try:
                conn = await AsyncConnection.connect(
                    self._url, autocommit=True, connect_timeout=int(CONNECT_TIMEOUT)
                )
                async with conn:
                    await self._subscribe(conn, listening)
                    backoff = 0.1
                    async for note in conn.notifies():
                        self._dispatch(note)
            except asyncio.CancelledError:
                if not listening.done():
                    listening.cancel()
                raise
            except Exception as exc:
                if not listening.done():
                    listening.set_exception(
                        ConnectionError(
                            f"cannot listen on PostgreSQL at {describe_url(self._url)}: {exc}"
                        )
                    )
                    return
                log.warning("PostgreSQL listener lost its connection (%s); reconnecting", exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)

    async def _subscribe(self, conn: AsyncConnection[Any], listening: asyncio.Future[None]) -> None:
        await conn.execute(f"LISTEN {CHANNEL}")
        await conn.execute(f"LISTEN {APPROVALS_CHANNEL}")
        if listening.done():
            # Reconnected: whatever was sent meanwhile is lost, so look again.
            self._wake.set()
            self._outbox_wake.set()
            self._approvals_noted()
        else:
            listening.set_result(None)

    def _dispatch(self, note: Notify) -> None:
        if note.payload == outbox_note(self._schema):
            self._outbox_wake.set()
        elif note.payload != self._schema:
            return
        elif note.channel == APPROVALS_CHANNEL:
            self._approvals_noted()
        else:
            self._wake.set()

    async def wait_for_work(self, seconds: float) -> None:
        await self._ensure_listening()
        await wait_and_clear(self._wake, seconds)


def describe_url(url: str) -> str:
    """The URL without its password, for error messages."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<unparsable URL>"
    host = parts.get("host", "localhost")
    port = parts.get("port", "5432")
    user = parts.get("user", "")
    dbname = parts.get("dbname", "")
    return f"postgresql://{user}{'@' if user else ''}{host}:{port}/{dbname}"
