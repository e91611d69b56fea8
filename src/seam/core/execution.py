"""The empty stack's execution store: submissions and the event log in process memory.

The reference semantics for the durable stores (the conformance suite runs against all
of them). Every method finishes without awaiting, so each is atomic here, which is the
in-memory form of the durable stores' transactions. `wait_for_work` wakes on an
`asyncio.Event`, the in-process stand-in for PostgreSQL's LISTEN/NOTIFY.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from seam.contracts.execution import (
    ALL_EVENTS,
    ANY_RUNNABLE,
    DEFAULT_LEASE_SECONDS,
    EVERY_SUBMISSION,
    ClaimScope,
    EventQuery,
    EventRecord,
    JournalEntry,
    NewSubmission,
    Settlement,
    Submission,
    SubmissionNotFound,
    SubmissionQuery,
    check_holder,
    check_new,
    check_same_payload,
    give_up_message,
)
from seam.contracts.images import as_stored
from seam.contracts.messages import ImagePart, Message
from seam.contracts.sessions import SessionNotFound
from seam.core.approval_answers import InMemoryApprovalAnswers
from seam.core.checkpoint_log import InMemoryCheckpointLog
from seam.core.outbox import InMemoryOutbox, wait_and_clear
from seam.core.read_through import replaced
from seam.core.sessions import InMemorySessionStore


class InMemoryExecutionStore(
    InMemoryApprovalAnswers, InMemoryCheckpointLog, InMemorySessionStore, InMemoryOutbox
):
    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock=clock)
        InMemoryOutbox.__init__(self, clock=clock)  # the outbox lives in the store too
        self._submissions: dict[str, Submission] = {}
        # The unsettled ones, in admission order: what claims scan.
        self._open: dict[str, Submission] = {}
        self._written: dict[str, list[Message]] = {}
        self._events: dict[str, list[EventRecord]] = {}
        # How many running submissions each session has (at most one, claims see to
        # it): what tells a claim the session is busy without scanning the queue.
        self._running: dict[str, int] = {}
        self._wake = asyncio.Event()
        # A person's images by SHA-256: the submissions' (the transcript's messages
        # hold their own), swept when no submission or message shows them.
        self._images: dict[str, ImagePart] = {}

    # Submissions

    async def admit(self, submission: NewSubmission) -> Submission:
        existing = self._submissions.get(submission.id)
        if existing is not None:
            check_same_payload(existing, submission)
            return existing
        if submission.session_key not in self._sessions:
            raise SessionNotFound(f"no session {submission.session_key!r}")
        check_new(submission)
        now = self._clock()
        stored = Submission(
            id=submission.id,
            session_key=submission.session_key,
            input=submission.input,
            state="queued",
            created_at=now,
            updated_at=now,
            personality=submission.personality,
            max_attempts=submission.max_attempts,
            images=tuple(image.sha256 for image in submission.images),
        )
        self._images.update((image.sha256, image) for image in submission.images)
        self._submissions[submission.id] = stored
        self._open[submission.id] = stored
        self._written[submission.id] = []
        self._wake.set()
        return stored

    async def submission(self, submission_id: str) -> Submission | None:
        return self._submissions.get(submission_id)

    async def submissions(
        self, session_key: str | None = None, query: SubmissionQuery = EVERY_SUBMISSION
    ) -> list[Submission]:
        states, limit = query.states, query.limit
        pool = self._submissions if states is None or "settled" in states else self._open
        found = [
            s
            for s in pool.values()
            if (session_key is None or s.session_key == session_key)
            and (states is None or s.state in states)
        ]
        return found if limit is None else found[:limit]

    async def claim(
        self, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS, scope: ClaimScope = ANY_RUNNABLE
    ) -> Submission | None:
        now = self._clock()
        dead = set(scope.dead_owners)
        submission_id = scope.submission_id
        # A session with any running submission is busy, even when that one's lease is
        # over: it is reclaimed first, so two turns never interleave in one transcript.
        busy = self._running
        if submission_id is not None:
            wanted = self._submissions.get(submission_id)
            candidates = [] if wanted is None else [wanted]
        else:
            candidates = list(self._open.values())
        for sub in candidates:
            if sub.state == "queued":
                if sub.not_before > now or sub.session_key in busy:
                    continue
            elif sub.state != "running" or not _lease_over(sub, now, dead):
                continue
            if sub.attempts >= sub.max_attempts:
                self._put(
                    sub,
                    state="settled",
                    outcome="failed",
                    error=give_up_message(sub),
                    lease_owner=None,
                    lease_expires_at=None,
                    settled_at=now,
                )
                continue
            return self._put(
                sub,
                state="running",
                attempts=sub.attempts + 1,
                lease_owner=owner,
                lease_expires_at=now + lease,
            )
        return None

    async def admit_and_claim(
        self, submission: NewSubmission, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS
    ) -> Submission:
        key = submission.session_key
        # Nothing awaits in here, so the look, the admission and the claim are one step.
        fresh = submission.id not in self._submissions
        ahead = any(s.session_key == key for s in self._open.values())
        sub = await self.admit(submission)
        if not fresh or ahead or sub.attempts >= sub.max_attempts:
            return sub
        return self._put(
            sub,
            state="running",
            attempts=sub.attempts + 1,
            lease_owner=owner,
            lease_expires_at=self._clock() + lease,
        )

    async def renew(self, submission_id: str, owner: str, *, lease: float) -> None:
        sub = self._held(submission_id, owner)
        self._put(sub, lease_expires_at=self._clock() + lease)

    async def append_for(self, submission_id: str, owner: str, entry: JournalEntry) -> None:
        await self._append_for(self._held(submission_id, owner), entry)

    async def _append_for(self, sub: Submission, entry: JournalEntry) -> None:
        submission_id = sub.id
        messages = entry.messages
        if entry.events:
            await self.append_events(entry.events)
        await self.append(sub.session_key, messages)
        for record in entry.usage:
            await self.record_usage(sub.session_key, record)
        self._written[submission_id].extend(as_stored(m) for m in messages)
        self._put(sub, steps=sub.steps + len(messages))

    async def submission_messages(self, submission_id: str) -> list[Message]:
        if submission_id not in self._submissions:
            raise SubmissionNotFound(f"no submission {submission_id!r}")
        # Messages removed from the transcript since (undo, delete) are not the
        # submission's any more.
        return list(self._written.get(submission_id, ()))

    async def settle(
        self, submission_id: str, owner: str | None, settlement: Settlement
    ) -> Submission:
        sub = check_holder(self._submissions.get(submission_id), submission_id, owner)
        if settlement.journal is not None:
            await self._append_for(sub, settlement.journal)
            sub = self._submissions[submission_id]
        settled = settlement.for_submission(sub)
        return self._put(
            sub,
            state="settled",
            outcome=settled.outcome,
            result=settled.result,
            error=settled.error,
            finish_reason=settled.finish_reason,
            lease_owner=None,
            lease_expires_at=None,
            settled_at=self._clock(),
        )

    async def release(
        self, submission_id: str, owner: str, *, not_before: float, error: str | None = None
    ) -> Submission:
        sub = self._held(submission_id, owner)
        return self._put(
            sub,
            state="queued",
            not_before=not_before,
            error=error,
            lease_owner=None,
            lease_expires_at=None,
        )

    async def request_abort(self, submission_id: str) -> Submission:
        sub = self._get(submission_id)
        if sub.state == "settled":
            return sub
        if sub.state == "queued":
            return self._put(
                sub,
                state="settled",
                outcome="aborted",
                abort_requested=True,
                settled_at=self._clock(),
            )
        return self._put(sub, abort_requested=True)

    # The event log

    async def append_events(self, records: Sequence[EventRecord]) -> None:
        for record in records:
            if record.session_key not in self._sessions:
                raise SessionNotFound(f"no session {record.session_key!r}")
        for record in records:
            self._events.setdefault(record.session_key, []).append(record)

    async def events(self, session_key: str, query: EventQuery = ALL_EVENTS) -> list[EventRecord]:
        only = query.submission_id
        found = [
            r
            for r in self._events.get(session_key, ())
            if r.seq > query.after_seq and (only is None or r.submission_id == only)
        ]
        return found if query.limit is None else found[: query.limit]

    async def last_seq(self, session_key: str) -> int:
        log = self._events.get(session_key)
        return log[-1].seq if log else 0

    async def session_events(
        self, session_key: str, after_seq: int = 0
    ) -> list[EventRecord] | None:
        if await self.get(session_key) is None:
            return None
        return await self.events(session_key, EventQuery(after_seq=after_seq))

    async def wait_for_work(self, seconds: float) -> None:
        await wait_and_clear(self._wake, seconds)

    async def delete(self, key: str) -> bool:
        deleted = await super().delete(key)
        if deleted:
            self._running.pop(key, None)
            for sid in [s.id for s in self._submissions.values() if s.session_key == key]:
                del self._submissions[sid]
                self._open.pop(sid, None)
                self._written.pop(sid, None)
            self._events.pop(key, None)
            self._forget_approvals(key)
            self._forget_checkpoints(key)
            shown = {h for sub in self._submissions.values() for h in sub.images}
            self._images = {h: i for h, i in self._images.items() if h in shown}
        return deleted

    async def load_images(self, hashes: Sequence[str]) -> list[ImagePart]:
        known = dict(self._images)
        for record in self._sessions.values():
            known.update((i.sha256, i) for m in record.messages for i in m.images)
        return [known[h] for h in hashes if h in known]

    # Helpers

    def _get(self, submission_id: str) -> Submission:
        try:
            return self._submissions[submission_id]
        except KeyError:
            raise SubmissionNotFound(f"no submission {submission_id!r}") from None

    def _held(self, submission_id: str, owner: str) -> Submission:
        return check_holder(self._submissions.get(submission_id), submission_id, owner)

    def _put(self, sub: Submission, **changes: object) -> Submission:
        updated = replaced(sub, updated_at=self._clock(), **changes)
        self._submissions[sub.id] = updated
        if (sub.state == "running") != (updated.state == "running"):
            key = sub.session_key
            count = self._running.get(key, 0) + (1 if updated.state == "running" else -1)
            if count:
                self._running[key] = count
            else:
                del self._running[key]
        if updated.state == "settled":
            self._open.pop(sub.id, None)
        else:
            self._open[sub.id] = updated
        if updated.state != "running":
            self._wake.set()
        return updated


def _lease_over(sub: Submission, now: float, dead: set[str]) -> bool:
    expires = sub.lease_expires_at
    return sub.lease_owner in dead or expires is None or expires <= now
