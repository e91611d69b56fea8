"""The Coordinator: drives submissions to settlement over an `ExecutionStore`.

Every claim runs the submission from wherever its transcript says it got to, so a
fresh run, a retry and a resume after a crash are one code path (`plan`, which picks the
step the turn starts from):

- input never saved: run the turn with it;
- final reply saved: settle with that reply;
- streamed text the crash cut off: keep it, marked interrupted, and tell the model;
- tool calls without results: keep the recorded results; idempotent tools run again,
  every other call gets an explicit "outcome unknown, not re-run" result;
- a transient provider error: back off and retry; context overflow: compress, retry;
- the store unreachable for a moment (`StoreUnavailable`: a database restart, a locked
  file): back off (`core/outage.py`) and run the claim again from what the store holds,
  the same repairs as a resume after a crash; past the bound the error goes up and the
  lease lapses, for the next claim to resume;
- abort requested: settle aborted (after the same repairs, re-running nothing, so the
  session's next turn still finds every tool call answered).

The turn writes its transcript through `ExecutionStore.append_for`, which checks the
lease: a worker that lost its lease (it stalled past it and another worker claimed the
submission) fails its next write and stops, so one submission never runs twice at once.

This module drives claims; its parts live beside it, one job each: `coordinator_repair`
(the plan), `coordinator_leases` (leases and other workers), `coordinator_settle` (how a
claim ends) and `coordinator_outage` (riding out a store outage).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Unpack

from seam.contracts.db import StoreUnavailable
from seam.contracts.execution import (
    ABORTED,
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    UNSETTLED,
    ExecutionStore,
    JournalEntry,
    LeaseLost,
    Settlement,
    Submission,
)
from seam.contracts.tools import CancelToken
from seam.contracts.tracing import NOOP_TRACER, Attributes, Tracer
from seam.core.coordinator_admit import Admission
from seam.core.coordinator_journal import TurnJournal
from seam.core.coordinator_leases import DeadOwners, OnEvent
from seam.core.coordinator_outage import OutageRetry
from seam.core.coordinator_repair import CUT_OFF_NOTE, UNKNOWN_OUTCOME, RepairPlan, resumed
from seam.core.coordinator_session import ClaimSession, DriveOptions, Resolve, SubmitOptions
from seam.core.coordinator_settle import (
    CONTEXT_OVERFLOW,
    TRANSIENT_ERRORS,
    Settling,
    TurnEnd,
)
from seam.core.coordinator_work import Working
from seam.core.event_log import EventRecorder
from seam.core.external_calls import ExtrasBook
from seam.core.log_fields import LOG_FIELDS
from seam.core.loop_parts import check_keywords
from seam.core.model_step import UserPrompt
from seam.core.outage import OutagePolicy

log = logging.getLogger("seam.coordinator")

# Seconds before retry n (1-based); the last value repeats.
DEFAULT_BACKOFF = (2.0, 5.0, 15.0, 30.0, 60.0)


class Coordinator(Admission, OutageRetry, Settling, Working):
    def __init__(
        self,
        store: ExecutionStore,
        *,
        owner: str | None = None,
        lease: float = DEFAULT_LEASE_SECONDS,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff: Sequence[float] = DEFAULT_BACKOFF,
        dead_owners: DeadOwners | None = None,
        compress: Callable[[str], Awaitable[bool]] | None = None,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] | None = None,
        rerun_transient: bool = True,
        tracer: Tracer | None = None,
        outage: OutagePolicy | None = None,
    ) -> None:
        self.store = store
        # How long a claim rides out its store being unreachable (whoever waits on it).
        self.outage = outage if outage is not None else OutagePolicy()
        # A `turn` span per claim; the model and tool spans of the turn are its children.
        self.tracer: Tracer = tracer if tracer is not None else NOOP_TRACER
        # False where a person waits on the turn (`seam run`, `seam chat`): the provider's
        # own, visible retries are all the retrying; a transient failure settles failed.
        self.rerun_transient = rerun_transient
        self.owner = owner or f"worker-{secrets.token_hex(6)}"
        self.lease = lease
        self.max_attempts = max_attempts
        self.backoff = tuple(backoff) or (0.0,)
        self._dead_owners = dead_owners
        # Set by the memory/context layer: compress a session's history after the
        # provider said it overflowed the context window. Returns whether it did.
        self.compress = compress
        self._clock = clock
        self._new_id = new_id or (lambda: secrets.token_hex(8))
        # What callers added to their submissions' turns (`contracts/turn_extras.py`).
        self.extras = ExtrasBook()
        self.unwritten: dict[str, JournalEntry] = {}
        self._driving: set[str] = set()
        # The submissions whose claim under way here has started a turn (`_stream`).
        self.streamed: set[str] = set()

    # Admission: `submit` and `ask` (`coordinator_admit`)

    # Driving

    async def ask(
        self,
        session_key: str,
        text: str,
        resolve: Resolve,
        on_event: OnEvent | None = None,
        cancel: CancelToken | None = None,
        **options: Unpack[SubmitOptions],
    ) -> Submission:
        """Submit `text` and drive it to settlement here (`cancel`: as `run`'s); returns
        it settled. The store
        admits it already claimed for this coordinator when nothing of its session is
        queued or running ahead of it (`ExecutionStore.admit_and_claim`: one transaction
        where an admission and a claim made two) and the turn starts at once; anything
        else (work ahead of it, a resend of an id admitted before) goes through `run`."""
        check_keywords(options, SubmitOptions.__optional_keys__, "ask")
        new = self._new(session_key, text, options)
        sub = self._offered(
            options, await self.store.admit_and_claim(new, self.owner, lease=self.lease)
        )
        if sub.state == "running" and sub.lease_owner == self.owner and sub.id not in self._driving:
            try:
                session = await resolve(sub.session_key)
            except (Exception, asyncio.CancelledError):
                await self._let_go(sub, CancelToken())  # to the queue, not a lease to wait out
                raise
            sub = await self._drive(sub, session, on_event, cancel)
            if sub.state == "settled":
                return sub
        return await self.run(sub.id, resolve, on_event, cancel=cancel, admitted=sub)

    async def run(
        self,
        submission_id: str,
        resolve: Resolve,
        on_event: OnEvent | None = None,
        **options: Unpack[DriveOptions],
    ) -> Submission:
        """Drive one submission to settlement here, or follow it while another worker
        does (replaying its stored events to `on_event`). Returns it settled. When it
        waits behind a submission of its session whose worker is gone, that one is
        finished here first.

        Cancelling `cancel` stops the turn at its next step and settles it aborted.
        `admitted`: the submission as `submit` just returned it, which saves reading it
        again (its state only decides whether the claim looks for dead owners first).
        """
        check_keywords(options, DriveOptions.__optional_keys__, "run")
        store, cancel = self.store, options.get("cancel")
        sub = await self._submission(submission_id, options.get("admitted"))
        seen: int | None = None  # where following another worker's events resumes
        while sub.state != "settled":
            claimed = await store.claim(
                self.owner,
                lease=self.lease,
                # Only a running submission can be held by a dead owner: a queued one
                # (the usual case) skips the look at every running submission.
                scope=await self._scope(submission_id, dead=sub.state == "running"),
            )
            if claimed is not None:
                sub, seen = await self._run_claimed(claimed, seen, resolve, on_event, cancel)
                continue
            # Queued behind its session's running submission: when that one's worker
            # is gone, finish it here first (the two never interleave).
            if sub.state == "queued" and await self._run_ahead(sub, resolve, on_event, cancel):
                continue
            if on_event is not None:
                if seen is None:
                    seen = await self._seen_before(sub)
                seen = await self._follow(sub, seen, on_event)
            sub = await self._look_again(submission_id)
        return sub

    async def _run_claimed(
        self,
        claimed: Submission,
        seen: int | None,
        resolve: Resolve,
        on_event: OnEvent | None,
        cancel: CancelToken | None,
    ) -> tuple[Submission, int | None]:
        """Drive a claim `run` made; returns it and where following its events resumes."""
        if on_event is not None and seen is not None:
            # Taking over from a worker that died: show what it streamed last.
            await self._follow(claimed, seen, on_event)
        session = await resolve(claimed.session_key)
        sub = await self._drive(claimed, session, on_event, cancel)
        if sub.state != "settled":
            seen = await self.store.last_seq(sub.session_key)
        return sub, seen

    async def _run_ahead(
        self,
        sub: Submission,
        resolve: Resolve,
        on_event: OnEvent | None,
        cancel: CancelToken | None,
    ) -> bool:
        """Drive the submission `sub` waits behind, when it could be claimed here."""
        ahead = await self._claim_ahead(sub)
        if ahead is None:
            return False
        await self._drive(ahead, await resolve(ahead.session_key), on_event, cancel)
        return True

    async def _look_again(self, submission_id: str) -> Submission:
        """The submission as the store has it now; unsettled, after waiting for work."""
        current = await self.store.submission(submission_id)
        if current is None:
            raise KeyError(f"submission {submission_id!r} was deleted")
        if current.state != "settled":
            await self.store.wait_for_work(self._pause_before(current))
        return current

    async def drain_runnable(
        self, resolve: Resolve, on_event: OnEvent | None = None, stop: asyncio.Event | None = None
    ) -> list[Submission]:
        """Run every submission that is runnable now, one after another (claiming no more
        once `stop` is set); returns them as they ended up (settled, or queued again)."""
        done: list[Submission] = []
        while stop is None or not stop.is_set():
            sub = await self.store.claim(self.owner, lease=self.lease, scope=await self._scope())
            if sub is None:
                return done
            done.append(await self._drive(sub, await resolve(sub.session_key), on_event))
        return done

    async def resume_pending(
        self, resolve: Resolve, on_event: OnEvent | None = None
    ) -> list[Submission]:
        """Settle every unsettled submission: repair and continue crashed ones, wait out
        retry back-offs and leases held by live workers elsewhere. Returns each
        submission that was pending, settled, in admission order."""
        store = self.store
        pending = [s.id for s in await store.submissions(query=UNSETTLED)]
        while True:
            await self.drain_runnable(resolve, on_event)
            left = await store.submissions(query=UNSETTLED)
            if not left:
                break
            await store.wait_for_work(min(self._pause_before(s) for s in left))
        out: list[Submission] = []
        for sid in pending:
            sub = await store.submission(sid)
            if sub is not None:
                out.append(sub)
        return out

    # One claim

    async def _drive(
        self,
        sub: Submission,
        session: ClaimSession,
        on_event: OnEvent | None,
        cancel: CancelToken | None = None,
    ) -> Submission:
        """One claim of `sub`, in a `turn` span (with the session and submission in every
        log line meanwhile). Its trace id follows from the submission id, so every attempt
        (a retry, a resume after a crash, in this process or another) is in the one trace,
        with nothing stored for it."""
        attributes: Attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "seam.session": sub.session_key,
            "seam.personality": sub.personality or session.info.personality or "",
            "seam.submission": sub.id,
            "seam.attempt": sub.attempts,
        }
        fields = LOG_FIELDS.set({"session": sub.session_key, "submission": sub.id})
        self._driving.add(sub.id)
        try:
            with self.tracer.span("turn", attributes, trace_key=sub.id) as span:
                attempt = partial(self._attempt, session=session, on_event=on_event, cancel=cancel)
                settled = await self._drive_claim(sub, attempt)
                if settled.state == "settled":
                    span.set_attribute("seam.outcome", settled.outcome or "")
                else:
                    span.set_attribute("seam.outcome", "retry" if settled.error else "released")
                if settled.error:
                    span.record_error(settled.error)
                return settled
        finally:
            self._driving.discard(sub.id)
            self.streamed.discard(sub.id)
            LOG_FIELDS.reset(fields)

    async def _attempt(
        self,
        sub: Submission,
        session: ClaimSession,
        on_event: OnEvent | None,
        cancel: CancelToken | None,
    ) -> Submission:
        """Plan from what `sub` wrote, repair, run the turn, settle. A store outage goes up
        to `_drive_claim`; any other failure settles the submission failed."""
        prepared = await self._prepare(sub, session)
        if isinstance(prepared, Submission):
            return prepared
        return await self._run_turn(sub, session, prepared, on_event, cancel)

    async def _prepare(self, sub: Submission, session: ClaimSession) -> Submission | RepairPlan:
        """Plan and write the repairs; returns the plan, or `sub` settled when it settles
        without running (aborted, its reply already stored, crashed)."""
        store = self.store
        owner = self.owner
        try:
            sub = await self._write_unwritten(sub)
            # An aborted submission still gets its transcript repaired (every tool call
            # answered, cut-off text kept), so the session's next turn is valid.
            plan = await self.plan(sub, session, rerun=not sub.abort_requested)
            if plan.repairs:
                await self.write_repairs(sub, session, owner, plan)
            if sub.abort_requested:
                return await store.settle(sub.id, owner, ABORTED)
            if plan.settle_with is not None:
                await self._close_log(sub, session, plan.settle_with)
                return await store.settle(
                    sub.id,
                    owner,
                    Settlement("completed", result=plan.settle_with, finish_reason="stop"),
                )
        except LeaseLost:
            return await self._current(sub)
        except StoreUnavailable:
            raise
        except Exception as exc:
            return await self._crashed(sub, exc)
        return plan

    async def _run_turn(
        self,
        sub: Submission,
        session: ClaimSession,
        plan: RepairPlan,
        on_event: OnEvent | None,
        cancel: CancelToken | None,
    ) -> Submission:
        """Run the turn from the plan's step under the lease, then settle it."""
        cancel = cancel or CancelToken()
        try:
            turn = self._stream(sub, session, plan, on_event, cancel)
            end = await self._leased(sub.id, turn, cancel)
        except asyncio.CancelledError:
            await self._let_go(sub, cancel)
            raise
        except LeaseLost:
            log.warning("lost the lease on %s; another worker has it", sub.id)
            return await self._current(sub)
        except StoreUnavailable:
            raise
        except Exception as exc:
            # A bug or a broken collaborator: the submission fails with the reason rather
            # than taking the worker down (and the next submission with it).
            return await self._crashed(sub, exc, session)
        try:
            return await self._conclude(sub, end)
        except LeaseLost:
            return await self._current(sub)
        except StoreUnavailable:
            raise
        except Exception as exc:  # e.g. the injected compressor
            return await self._crashed(sub, exc, session)
        finally:
            end.deliver(on_event)  # `done` once the answer is stored with the settlement

    async def _stream(
        self,
        sub: Submission,
        session: ClaimSession,
        plan: RepairPlan,
        on_event: OnEvent | None,
        cancel: CancelToken,
    ) -> TurnEnd:
        """Run the turn, storing its events; returns how it ended and what is left to
        write (the answer and the last events, for the settlement to write)."""
        store = self.store
        assert plan.start is not None  # only a plan that settles has none
        extras = await self._extras_of(sub)
        start = resumed(plan.start, extras)
        recorder = EventRecorder(store, sub.id, redact=session.loop.redact)
        journal = TurnJournal(
            store,
            sub.id,
            self.owner,
            recorder,
            holds_input=isinstance(start, UserPrompt),
            rerunnable=session.is_idempotent,
        )
        end = TurnEnd()
        # From here the log may hold text of this claim's turn (`Repairs.plan`).
        self.streamed.add(sub.id)
        try:
            session.loop.sequences.continue_after(
                sub.session_key, await store.last_seq(sub.session_key)
            )
            events = session.run_from(
                start,
                personality=sub.personality,
                cancel=cancel,
                transcript=journal.write,
                extras=extras,
            )
            # The hot loop: a text delta (most events) is buffered and handed on, with
            # no other look at it.
            buffer, saw = recorder.buffer, end.saw
            async for event in events:
                if buffer(event):
                    if on_event is not None:
                        on_event(event)
                    continue
                await recorder.record(event)
                saw(event, on_event)
        except BaseException:
            with contextlib.suppress(Exception):
                await journal.abandon()
            raise
        end.tail = await journal.tail()
        return end


# Re-exported: these lived here, and callers import them from here.
__all__ = [
    "CONTEXT_OVERFLOW",
    "CUT_OFF_NOTE",
    "TRANSIENT_ERRORS",
    "UNKNOWN_OUTCOME",
    "Coordinator",
    "DeadOwners",
    "OnEvent",
    "RepairPlan",
    "Resolve",
]
