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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from seam.contracts.db import StoreUnavailable
from seam.contracts.events import AgentEvent, Done, ErrorEvent, TextDelta
from seam.contracts.execution import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    ExecutionStore,
    LeaseLost,
    NewSubmission,
    Submission,
)
from seam.contracts.messages import Message, ToolCall
from seam.contracts.model import RETRYABLE_KINDS
from seam.contracts.sessions import UsageRecord
from seam.contracts.tools import CancelToken
from seam.contracts.tracing import NOOP_TRACER, Attributes, Tracer
from seam.core.event_log import EventRecorder, decode, encode
from seam.core.log_fields import LOG_FIELDS
from seam.core.model_step import CallModel, UserPrompt, continues_cut_off
from seam.core.outage import OutagePolicy
from seam.core.tool_step import RunTools
from seam.core.turn import TurnStep

if TYPE_CHECKING:
    from seam.core.session_factory import Session

log = logging.getLogger("seam.coordinator")

# Error kinds worth another attempt after a pause (the provider classified them).
TRANSIENT_ERRORS = RETRYABLE_KINDS | {"timeout"}
CONTEXT_OVERFLOW = "context_overflow"
# Seconds before retry n (1-based); the last value repeats.
DEFAULT_BACKOFF = (2.0, 5.0, 15.0, 30.0, 60.0)
UNKNOWN_OUTCOME = (
    "outcome unknown: the process running this tool stopped before its result was saved, "
    "and the tool was not run again because running it twice may not be safe. Check its "
    "effects before relying on them or trying again."
)
CUT_OFF_NOTE = (
    "Note: your previous reply was cut off before it finished (the process running it "
    "stopped). Its text is kept above, marked as interrupted. Continue from where it "
    "stopped; do not repeat what was already said."
)
# Event types that end a model call's streamed text (text after them is a new call's).
_TEXT_BOUNDARIES = frozenset({"run_start", "tool_start", "tool_end", "done", "error", "halt"})

T = TypeVar("T")
Resolve = Callable[[str], Awaitable["Session"]]
OnEvent = Callable[[AgentEvent], None]
# Which of these lease owners are known dead (a crashed process on this machine).
DeadOwners = Callable[[Sequence[str]], Sequence[str]]


@dataclass(slots=True)
class RepairPlan:
    """What a claim does: write the repairs, then settle at once or run the turn from
    its starting step."""

    # The step the turn starts from: `UserPrompt(input)` on a first run, `RunTools` for
    # idempotent calls to run again, `CallModel` (with a cut-off note) to go on.
    start: TurnStep | None = None
    # Settle at once with this final reply.
    settle_with: str | None = None
    # Written before the turn continues: cut-off text, "outcome unknown" results.
    repairs: list[Message] = field(default_factory=list)


class Coordinator:
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

    # Admission

    async def submit(
        self,
        session_key: str,
        text: str,
        *,
        submission_id: str | None = None,
        personality: str | None = None,
    ) -> Submission:
        return await self.store.admit(
            NewSubmission(
                submission_id or self._new_id(),
                session_key,
                text,
                personality=personality,
                max_attempts=self.max_attempts,
            )
        )

    async def abort(self, submission_id: str) -> Submission:
        return await self.store.request_abort(submission_id)

    # Driving

    async def run(
        self,
        submission_id: str,
        resolve: Resolve,
        on_event: OnEvent | None = None,
        *,
        cancel: CancelToken | None = None,
        admitted: Submission | None = None,
    ) -> Submission:
        """Drive one submission to settlement here, or follow it while another worker
        does (replaying its stored events to `on_event`). Returns it settled. When it
        waits behind a submission of its session whose worker is gone, that one is
        finished here first.

        Cancelling `cancel` stops the turn at its next step and settles it aborted.
        `admitted`: the submission as `submit` just returned it, which saves reading it
        again (its state only decides whether the claim looks for dead owners first).
        """
        store = self.store
        if admitted is not None and admitted.id == submission_id:
            sub: Submission | None = admitted
        else:
            sub = await store.submission(submission_id)
        if sub is None:
            raise KeyError(f"no submission {submission_id!r}")
        seen: int | None = None  # where following another worker's events resumes
        while sub.state != "settled":
            claimed = await store.claim(
                self.owner,
                lease=self.lease,
                submission_id=submission_id,
                # Only a running submission can be held by a dead owner: a queued one
                # (the usual case) skips the look at every running submission.
                dead_owners=await self._dead() if sub.state == "running" else (),
            )
            if claimed is not None:
                if on_event is not None and seen is not None:
                    # Taking over from a worker that died: show what it streamed last.
                    await self._follow(claimed, seen, on_event)
                session = await resolve(claimed.session_key)
                sub = await self._drive(claimed, session, on_event, cancel)
                if sub.state != "settled":
                    seen = await store.last_seq(sub.session_key)
                continue
            if sub.state == "queued":
                # Queued behind its session's running submission: when that one's worker
                # is gone, finish it here first (the two never interleave).
                ahead = await self._claim_ahead(sub)
                if ahead is not None:
                    await self._drive(ahead, await resolve(ahead.session_key), on_event, cancel)
                    continue
            if on_event is not None:
                if seen is None:
                    seen = await self._seen_before(sub)
                seen = await self._follow(sub, seen, on_event)
            current = await store.submission(submission_id)
            if current is None:
                raise KeyError(f"submission {submission_id!r} was deleted")
            sub = current
            if sub.state != "settled":
                await store.wait_for_work(self._pause_before(sub))
        return sub

    async def drain_runnable(
        self, resolve: Resolve, on_event: OnEvent | None = None, stop: asyncio.Event | None = None
    ) -> list[Submission]:
        """Run every submission that is runnable now, one after another (claiming no more
        once `stop` is set); returns them as they ended up (settled, or queued again)."""
        done: list[Submission] = []
        while stop is None or not stop.is_set():
            sub = await self.store.claim(
                self.owner, lease=self.lease, dead_owners=await self._dead()
            )
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
        pending = [s.id for s in await store.submissions(states=("queued", "running"))]
        while True:
            await self.drain_runnable(resolve, on_event)
            left = await store.submissions(states=("queued", "running"))
            if not left:
                break
            await store.wait_for_work(min(self._pause_before(s) for s in left))
        out: list[Submission] = []
        for sid in pending:
            sub = await store.submission(sid)
            if sub is not None:
                out.append(sub)
        return out

    async def work(
        self,
        resolve: Resolve,
        *,
        stop: asyncio.Event | None = None,
        on_event: OnEvent | None = None,
        on_settled: Callable[[Submission], None] | None = None,
        idle_wait: float = 5.0,
    ) -> None:
        """A worker: drain, then sleep until the store says there may be work; until
        `stop` is set."""
        stop = stop or asyncio.Event()
        while not stop.is_set():
            try:
                drained = await self.drain_runnable(resolve, on_event, stop)
            except StoreUnavailable as exc:  # an outage past the bound: no traceback
                log.warning("worker %s: the store is unavailable (%s)", self.owner, exc)
                drained = []
            except Exception:
                # The store itself failed (a dropped connection, a full disk): keep the
                # worker alive and try again after the idle wait.
                log.exception("worker %s could not drain the queue", self.owner)
                drained = []
            for sub in drained:
                if on_settled is not None and sub.state == "settled":
                    try:
                        on_settled(sub)
                    except Exception:  # a report that fails (a closed pipe) is not the work
                        log.exception("reporting %s failed", sub.id)
            if stop.is_set():
                return
            waiter = asyncio.ensure_future(self.store.wait_for_work(idle_wait))
            stopper = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (waiter, stopper):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    # One claim

    async def _drive(
        self,
        sub: Submission,
        session: Session,
        on_event: OnEvent | None,
        cancel: CancelToken | None = None,
    ) -> Submission:
        """One claim of `sub`, in a `turn` span. Its trace id follows from the
        submission id, so every attempt (a retry, a resume after a crash, in this process
        or another) is in the one trace, with nothing stored for it."""
        attributes: Attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "seam.session": sub.session_key,
            "seam.personality": sub.personality or session.info.personality or "",
            "seam.submission": sub.id,
            "seam.attempt": sub.attempts,
        }
        fields = LOG_FIELDS.set({"session": sub.session_key, "submission": sub.id})
        try:
            return await self._traced_claim(sub, session, on_event, cancel, attributes)
        finally:
            LOG_FIELDS.reset(fields)

    async def _traced_claim(
        self,
        sub: Submission,
        session: Session,
        on_event: OnEvent | None,
        cancel: CancelToken | None,
        attributes: Attributes,
    ) -> Submission:
        with self.tracer.span("turn", attributes, trace_key=sub.id) as span:
            settled = await self._drive_claim(sub, session, on_event, cancel)
            if settled.state == "settled":
                span.set_attribute("seam.outcome", settled.outcome or "")
            else:
                span.set_attribute("seam.outcome", "retry" if settled.error else "released")
            if settled.error:
                span.record_error(settled.error)
            return settled

    async def _drive_claim(
        self,
        sub: Submission,
        session: Session,
        on_event: OnEvent | None,
        cancel: CancelToken | None = None,
    ) -> Submission:
        """The claim, run again from the store's state after each outage of the store
        (with the lease renewed first: a worker that lost it meanwhile stops there), until
        the outage policy gives up and the error goes up."""
        outages = 0
        while True:
            try:
                if outages:
                    await self.store.renew(sub.id, self.owner, lease=self.lease)
                    sub = await self._current(sub)  # `steps` moved on: the plan reads it
                return await self._attempt(sub, session, on_event, cancel)
            except LeaseLost:
                return await self._current(sub)
            except StoreUnavailable as exc:
                outages += 1
                pause = self.outage.pause(outages)
                if pause is None:
                    log.warning("the store stayed unavailable; leaving %s to its lease", sub.id)
                    raise
                log.warning(
                    "the store is unavailable (%s); resuming %s in %.2fs", exc, sub.id, pause
                )
                await self.outage.sleep(pause)

    async def _attempt(
        self,
        sub: Submission,
        session: Session,
        on_event: OnEvent | None,
        cancel: CancelToken | None,
    ) -> Submission:
        """Plan from what `sub` wrote, repair, run the turn, settle. A store outage goes up
        to `_drive_claim`; any other failure settles the submission failed."""
        store = self.store
        owner = self.owner
        try:
            # An aborted submission still gets its transcript repaired (every tool call
            # answered, cut-off text kept), so the session's next turn is valid.
            plan = await self.plan(sub, session, rerun=not sub.abort_requested)
            if plan.repairs:
                await store.append_for(sub.id, owner, plan.repairs)
            if sub.abort_requested:
                return await store.settle(sub.id, owner, "aborted", finish_reason="aborted")
            if plan.settle_with is not None:
                await self._close_log(sub, session, plan.settle_with)
                return await store.settle(
                    sub.id, owner, "completed", result=plan.settle_with, finish_reason="stop"
                )
        except LeaseLost:
            return await self._current(sub)
        except StoreUnavailable:
            raise
        except Exception as exc:
            return await self._crashed(sub, exc)

        cancel = cancel or CancelToken()
        try:
            turn = self._stream(sub, session, plan, on_event, cancel)
            done, error = await self._leased(sub.id, turn, cancel)
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
            return await self._conclude(sub, done, error)
        except LeaseLost:
            return await self._current(sub)
        except StoreUnavailable:
            raise
        except Exception as exc:  # e.g. the injected compressor
            return await self._crashed(sub, exc, session)

    async def _stream(
        self,
        sub: Submission,
        session: Session,
        plan: RepairPlan,
        on_event: OnEvent | None,
        cancel: CancelToken,
    ) -> tuple[Done | None, ErrorEvent | None]:
        """Run the turn, storing its events; returns its `done` and last `error` event."""
        store = self.store
        owner = self.owner
        recorder = EventRecorder(store, sub.id, redact=session.loop.redact)
        done: Done | None = None
        error: ErrorEvent | None = None

        async def write_transcript(
            messages: Sequence[Message], usage: Sequence[UsageRecord]
        ) -> None:
            # The recorder stores events behind the turn's back; repair reads the log
            # beside the transcript (`_unsaved_text`), so the log must never lag it.
            events = await recorder.handover() if messages else ()
            await store.append_for(sub.id, owner, messages, usage=usage, events=events)

        try:
            session.loop.sequences.continue_after(
                sub.session_key, await store.last_seq(sub.session_key)
            )
            assert plan.start is not None  # only a plan that settles has none
            events = session.run_from(
                plan.start,
                personality=sub.personality,
                cancel=cancel,
                transcript=write_transcript,
            )
            async for event in events:
                if not recorder.buffer(event):
                    await recorder.record(event)
                if on_event is not None:
                    on_event(event)
                if isinstance(event, ErrorEvent):
                    error = event
                elif isinstance(event, Done):
                    done = event
        finally:
            await recorder.aclose()
        return done, error

    async def _conclude(
        self, sub: Submission, done: Done | None, error: ErrorEvent | None
    ) -> Submission:
        store = self.store
        owner = self.owner
        if done is not None and done.finish_reason not in ("cancelled", "error", "timeout"):
            # The usual end: the settle itself turns it aborted if one was requested.
            return await store.settle(
                sub.id,
                owner,
                "completed",
                result=done.text,
                finish_reason=done.finish_reason,
                unless_aborted=True,
            )
        current = await self._current(sub)
        if current.abort_requested or (done is not None and done.finish_reason == "cancelled"):
            return await store.settle(sub.id, owner, "aborted", finish_reason="aborted")
        if done is None:
            return await store.settle(sub.id, owner, "failed", error="the turn ended early")
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
            return await store.settle(sub.id, owner, "failed", error=message, finish_reason=finish)
        raise AssertionError(f"unhandled finish reason {finish!r}")  # pragma: no cover

    async def _close_log(self, sub: Submission, session: Session, reply: str) -> None:
        """A reply stored before a crash settles without its turn running again: when the
        process died before the turn's `done` event reached the log, write one, so every
        follower of the session (a page, a gateway, `--follow`) sees the turn end and a
        replay shows exactly one `done` per answer."""
        records = await self.store.events(sub.session_key, submission_id=sub.id)
        if any(record.type == "done" for record in records):
            return
        seq = await self.store.last_seq(sub.session_key) + 1
        done = Done(sub.session_key, "", seq, reply, "stop")
        await self.store.append_events([encode(done, sub.id, session.loop.redact)])
        session.loop.sequences.continue_after(sub.session_key, seq)

    async def plan(self, sub: Submission, session: Session, *, rerun: bool = True) -> RepairPlan:
        """What claiming `sub` does, from what it already wrote (nothing: a first run)."""
        # `steps` counts what it wrote: a first run needs no look at the transcript.
        written = await self.store.submission_messages(sub.id) if sub.steps else []
        if not written:
            return RepairPlan(start=UserPrompt(sub.input))
        last = written[-1]
        if last.role == "assistant" and not last.tool_calls and not last.interrupted:
            return RepairPlan(settle_with=last.content)
        plan = RepairPlan()
        # A retry of a call already cut off keeps that first cut-off text only (the
        # model step stores no second one either): one interrupted message per call.
        cut_off = "" if continues_cut_off(written) else await self._unsaved_text(sub, last)
        if cut_off:
            plan.repairs.append(Message("assistant", cut_off, interrupted=True))
        model_step = CallModel(CUT_OFF_NOTE) if cut_off or last.interrupted else CallModel()
        again: list[ToolCall] = []
        asked = _last_calls(written)
        if asked is not None:
            calls, answered = asked
            for call in calls:
                if call.id in answered:
                    continue
                if rerun and session.is_idempotent(call.name):
                    again.append(call)
                else:
                    plan.repairs.append(
                        Message("tool", UNKNOWN_OUTCOME, tool_call_id=call.id, name=call.name)
                    )
        plan.start = RunTools(tuple(again), then=model_step) if again else model_step
        return plan

    async def _unsaved_text(self, sub: Submission, last: Message) -> str:
        """Text the model streamed in this submission's last model call that never made
        it into the transcript (the event log has it; the crash came first)."""
        pieces: list[str] = []
        for record in await self.store.events(sub.session_key, submission_id=sub.id):
            if record.type in _TEXT_BOUNDARIES:
                pieces = []
            elif record.type == "text_delta":
                pieces.extend(e.text for e in decode(record) if isinstance(e, TextDelta))
        text = "".join(pieces)
        if not text:
            return ""
        if last.role == "assistant" and last.content.startswith(text):
            return ""  # stored after all: the crash came between storing and the next event
        return text

    async def _leased(self, submission_id: str, work: Awaitable[T], cancel: CancelToken) -> T:
        """Await `work` while renewing the lease; losing it (or an abort) cancels `cancel`."""
        renewal = asyncio.ensure_future(self._keep_lease(submission_id, cancel))
        try:
            return await work
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal

    async def _keep_lease(self, submission_id: str, cancel: CancelToken) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            try:
                await self.store.renew(submission_id, self.owner, lease=self.lease)
                sub = await self.store.submission(submission_id)
            except LeaseLost:
                cancel.cancel("lease lost")
                return
            except StoreUnavailable as exc:
                log.warning("could not renew the lease on %s: %s", submission_id, exc)
                continue
            except Exception:
                log.exception("could not renew the lease on %s", submission_id)
                continue
            if sub is not None and sub.abort_requested:
                cancel.cancel("aborted")

    # Helpers

    async def _let_go(self, sub: Submission, cancel: CancelToken) -> None:
        """The task driving `sub` was cancelled (its process is stopping): settle it
        aborted when a stop was asked for (the token, an abort request), else hand it back
        to the queue, so it never waits out a lease or runs later against the user's wish."""
        try:
            current = await self._current(sub)
            if current.state != "running" or current.lease_owner != self.owner:
                return
            if cancel.cancelled or current.abort_requested:
                await self.store.settle(sub.id, self.owner, "aborted", finish_reason="aborted")
            else:
                await self.store.release(sub.id, self.owner, not_before=self._clock())
        except Exception:
            log.exception("could not let go of %s", sub.id)

    async def _crashed(
        self, sub: Submission, exc: Exception, session: Session | None = None
    ) -> Submission:
        log.exception("submission %s crashed", sub.id, exc_info=exc)
        try:
            if session is not None:
                await self._answer_open_calls(sub, session)
            return await self.store.settle(
                sub.id, self.owner, "failed", error=f"crashed: {exc!r}", finish_reason="error"
            )
        except LeaseLost:
            return await self._current(sub)

    async def _answer_open_calls(self, sub: Submission, session: Session) -> None:
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
            await self.store.append_for(sub.id, self.owner, plan.repairs)

    async def _claim_ahead(self, sub: Submission) -> Submission | None:
        """Claim the submission `sub` waits behind in its session, if it is reclaimable."""
        for running in await self.store.submissions(sub.session_key, states=("running",)):
            claimed = await self.store.claim(
                self.owner,
                lease=self.lease,
                submission_id=running.id,
                dead_owners=await self._dead(),
            )
            if claimed is not None:
                return claimed
        return None

    async def _current(self, sub: Submission) -> Submission:
        current = await self.store.submission(sub.id)
        return current if current is not None else sub

    async def _dead(self) -> Sequence[str]:
        if self._dead_owners is None:
            return ()
        running = await self.store.submissions(states=("running",))
        owners = sorted(
            {s.lease_owner for s in running if s.lease_owner and s.lease_owner != self.owner}
        )
        return self._dead_owners(owners) if owners else ()

    async def _seen_before(self, sub: Submission) -> int:
        """Where following a submission's events starts: its first stored event."""
        first = await self.store.events(sub.session_key, submission_id=sub.id, limit=1)
        if first:
            return first[0].first_seq - 1
        return await self.store.last_seq(sub.session_key)

    async def _follow(self, sub: Submission, seen: int, on_event: OnEvent) -> int:
        for record in await self.store.events(
            sub.session_key, after_seq=seen, submission_id=sub.id
        ):
            for event in decode(record, seen):
                on_event(event)
            seen = max(seen, record.seq)
        return seen

    def _pause_before(self, sub: Submission) -> float:
        """How long to wait before looking at a submission again."""
        now = self._clock()
        if sub.state == "queued" and sub.not_before > now:
            return max(0.05, min(sub.not_before - now, 5.0))
        if sub.state == "running" and sub.lease_expires_at is not None:
            return max(0.05, min(sub.lease_expires_at - now, 1.0))
        return 1.0


def _last_calls(written: Sequence[Message]) -> tuple[tuple[ToolCall, ...], set[str]] | None:
    """The last assistant message's tool calls and the ids already answered after it."""
    for index in range(len(written) - 1, -1, -1):
        message = written[index]
        if message.role == "assistant":
            if not message.tool_calls:
                return None
            answered = {m.tool_call_id for m in written[index + 1 :] if m.tool_call_id}
            return message.tool_calls, {a for a in answered if a is not None}
    return None


__all__ = ["CUT_OFF_NOTE", "UNKNOWN_OUTCOME", "Coordinator", "RepairPlan"]
