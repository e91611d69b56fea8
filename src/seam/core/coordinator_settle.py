"""Settling a claimed submission: completed, aborted, failed, or handed back for a retry.

A mixin of `Coordinator`, apart because it holds the decisions about how a turn ended:
a transient provider error backs off and retries, a context overflow compresses and
retries, a crash settles failed after answering the tool calls it left open (so the
session's next turn is valid), and a reply stored before a crash closes the event log.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from seam.contracts.db import StoreUnavailable
from seam.contracts.events import AgentEvent, Done, ErrorEvent
from seam.contracts.execution import (
    ABORTED,
    EventQuery,
    JournalEntry,
    LeaseLost,
    Settlement,
    Submission,
)
from seam.contracts.messages import Message
from seam.contracts.model import RETRYABLE_KINDS
from seam.contracts.tools import CancelToken
from seam.core.coordinator_leases import Leases, OnEvent
from seam.core.coordinator_repair import Repairs
from seam.core.coordinator_session import ClaimSession
from seam.core.event_log import encode

T = TypeVar("T")

# How a turn ends without an answer to settle as completed.
FAILED_FINISHES = ("cancelled", "error", "timeout")

log = logging.getLogger("seam.coordinator")

# Error kinds worth another attempt after a pause (the provider classified them).
TRANSIENT_ERRORS = RETRYABLE_KINDS | {"timeout"}
CONTEXT_OVERFLOW = "context_overflow"


class TurnEnd:
    """How a claimed turn ended: its `done` and last `error` events, and what is left to
    write (`TurnJournal.tail`). `done` reaches the caller's `on_event` only once the
    settlement (with the answer) is written: a surface that sees it may read the answer
    back at once."""

    __slots__ = ("_held", "done", "error", "tail")

    def __init__(self) -> None:
        self.done: Done | None = None
        self.error: ErrorEvent | None = None
        self.tail: JournalEntry | None = None
        self._held: Done | None = None

    def saw(self, event: AgentEvent, on_event: OnEvent | None) -> None:
        if isinstance(event, Done):
            self.done = event
            if on_event is not None:
                self._held = event
            return
        if on_event is not None:
            on_event(event)
        if isinstance(event, ErrorEvent):
            self.error = event

    def deliver(self, on_event: OnEvent | None) -> None:
        held, self._held = self._held, None
        if held is not None and on_event is not None:
            on_event(held)


class Settling(Repairs, Leases):
    """How a claim ends, written to the store."""

    rerun_transient: bool
    backoff: tuple[float, ...]
    compress: Callable[[str], Awaitable[bool]] | None
    # Per submission, the turn's last write (its answer) that a store outage refused: the
    # claim's next attempt writes it first, so the answer is not asked for again.
    unwritten: dict[str, JournalEntry]

    async def _write_unwritten(self, sub: Submission) -> Submission:
        """Write what an outage kept from the previous attempt (see `unwritten`); `sub`
        as it is after that write (its `steps`, which the plan reads, moved on)."""
        tail = self.unwritten.pop(sub.id, None)
        if tail is None:
            return sub
        if not await self._landed(sub, tail):
            await self._keeping(sub, tail, self.store.append_for(sub.id, self.owner, tail))
        return await self._current(sub)

    async def _landed(self, sub: Submission, tail: JournalEntry) -> bool:
        """Whether a write the store refused committed after all: an outage can drop the
        connection after the commit and before its answer (a server restart), and that
        write again would store its messages twice (the turn's input, when the tail
        carried it). One transaction holds the write's events and messages, and only
        the lease holder numbers this session's events: they are there when the log's
        last event is the write's last one or later."""
        if tail.events:
            return await self.store.last_seq(sub.session_key) >= max(e.seq for e in tail.events)
        if not tail.messages:
            return False
        stored = await self.store.submission_messages(sub.id)
        return _said(stored[-len(tail.messages) :]) == _said(tail.messages)

    async def _keeping(self, sub: Submission, tail: JournalEntry | None, write: Awaitable[T]) -> T:
        """`write`, which carries `tail`; kept for the next attempt when the store is out.
        The transaction may have committed anyway: the next attempt looks first
        (`_landed`), and a settle that did leaves nothing to attempt."""
        try:
            return await write
        except StoreUnavailable:
            if tail is not None:
                self.unwritten[sub.id] = tail
            raise

    async def _conclude(self, sub: Submission, end: TurnEnd) -> Submission:
        store = self.store
        owner = self.owner
        done, error = end.done, end.error
        if done is not None and done.finish_reason not in FAILED_FINISHES:
            # The usual end, with the answer and the last events in the same write: the
            # settle itself turns it aborted if one was requested.
            settlement = Settlement(
                "completed",
                result=done.text,
                finish_reason=done.finish_reason,
                unless_aborted=True,
                journal=end.tail,
            )
            return await self._keeping(sub, end.tail, store.settle(sub.id, owner, settlement))
        if end.tail is not None:
            await self._keeping(sub, end.tail, store.append_for(sub.id, owner, end.tail))
        current = await self._current(sub)
        if current.abort_requested or (done is not None and done.finish_reason == "cancelled"):
            return await store.settle(sub.id, owner, ABORTED)
        if done is None:
            return await store.settle(
                sub.id, owner, Settlement("failed", error="the turn ended early")
            )
        finish = done.finish_reason
        if finish == "error" or finish == "timeout":
            kind = error.kind if error is not None else finish
            message = f"{kind}: {error.message}" if error is not None else finish
            compress = self.compress
            if (
                kind == CONTEXT_OVERFLOW
                and compress is not None
                # A summary can take longer than the lease: keep renewing it meanwhile.
                and await self._leased(sub.id, compress(sub.session_key), CancelToken())
            ):
                return await store.release(sub.id, owner, not_before=self._clock(), error=message)
            if (
                (kind in TRANSIENT_ERRORS or finish == "timeout")
                and current.attempts < current.max_attempts
                and self.rerun_transient
            ):
                pause = self.backoff[min(current.attempts, len(self.backoff)) - 1]
                return await store.release(
                    sub.id, owner, not_before=self._clock() + pause, error=message
                )
            return await store.settle(
                sub.id, owner, Settlement("failed", error=message, finish_reason=finish)
            )
        raise AssertionError(f"unhandled finish reason {finish!r}")  # pragma: no cover

    async def _close_log(self, sub: Submission, session: ClaimSession, reply: str) -> None:
        """A reply stored before a crash settles without its turn running again: when the
        process died before the turn's `done` event reached the log, write one, so every
        follower of the session (a page, a gateway, `--follow`) sees the turn end and a
        replay shows exactly one `done` per answer."""
        records = await self.store.events(sub.session_key, EventQuery(submission_id=sub.id))
        if any(record.type == "done" for record in records):
            return
        seq = await self.store.last_seq(sub.session_key) + 1
        done = Done(sub.session_key, "", seq, reply, "stop")
        await self.store.append_events([encode(done, sub.id, session.loop.redact)])
        session.loop.sequences.continue_after(sub.session_key, seq)

    async def _crashed(
        self, sub: Submission, exc: Exception, session: ClaimSession | None = None
    ) -> Submission:
        log.exception("submission %s crashed", sub.id, exc_info=exc)
        try:
            if session is not None:
                await self._answer_open_calls(sub, session)
            return await self.store.settle(
                sub.id,
                self.owner,
                Settlement("failed", error=f"crashed: {exc!r}", finish_reason="error"),
            )
        except LeaseLost:
            return await self._current(sub)

    async def _answer_open_calls(self, sub: Submission, session: ClaimSession) -> None:
        """Before a crashed submission is settled failed, give each tool call it left
        unanswered its unknown-outcome result (and keep its cut-off text), as a resume
        would: a transcript with a call and no result is one no provider accepts, so the
        session's next turn would fail too. (Found by the chaos suite: the disk filled
        between a tool call and its stored result.) If even that cannot be written, the
        error goes up and the submission stays claimed, to be repaired by whoever
        claims it next."""
        current = await self.store.submission(sub.id) or sub
        plan = await self.plan(current, session, rerun=False)
        if plan.repairs:
            await self.write_repairs(sub, session, self.owner, plan)


def _said(messages: Sequence[Message]) -> list[tuple[str, str, str | None]]:
    return [(m.role, m.content, m.tool_call_id) for m in messages]
