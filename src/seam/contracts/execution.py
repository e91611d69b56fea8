"""The execution store: sessions and transcripts (a `SessionStore`) plus submissions and
the event log, so every turn is durable and any worker can finish what another began.

A submission is one user message on its way to an answer:
`queued -> running (leased to one owner, lease renewed) -> settled (completed | failed |
aborted)`. The transcript rows a submission writes are tagged with its id and written
together with the submission's progress in one transaction (`append_for`), which is what
lets a restarted process see exactly how far a crashed turn got.

Time is the store's injected clock (seconds since the epoch); on several machines their
clocks are assumed to agree to well within a lease.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from seam.contracts.images import MAX_IMAGES, ImageBlobs
from seam.contracts.messages import ImagePart, Message
from seam.contracts.sessions import SessionStore, UsageRecord

SubmissionState = Literal["queued", "running", "settled"]
Outcome = Literal["completed", "failed", "aborted"]

DEFAULT_MAX_ATTEMPTS = 10
DEFAULT_LEASE_SECONDS = 30.0


class SubmissionConflict(ValueError):
    """The submission id is taken by a submission with a different payload."""


class SubmissionNotFound(KeyError):
    pass


class LeaseLost(RuntimeError):
    """The caller no longer holds the submission's lease (it expired and another owner
    claimed it, or it was settled): whatever the caller was doing must stop."""


@dataclass(frozen=True, slots=True)
class NewSubmission:
    id: str
    session_key: str
    input: str
    personality: str | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    # What the person's message shows (`contracts/images.py`), stored with the
    # submission so whichever worker claims it sends them; `input` holds their
    # placeholder lines.
    images: tuple[ImagePart, ...] = ()


@dataclass(frozen=True, slots=True)
class Submission:
    id: str
    session_key: str
    input: str
    state: SubmissionState
    created_at: float
    updated_at: float
    personality: str | None = None
    outcome: Outcome | None = None
    # Claims so far (the first run counts as one).
    attempts: int = 0
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    # A queued submission is not claimed before this time (retry back-off).
    not_before: float = 0.0
    abort_requested: bool = False
    # Transcript messages this submission has written (its progress).
    steps: int = 0
    # The final answer, once completed.
    result: str | None = None
    error: str | None = None
    finish_reason: str | None = None
    settled_at: float | None = None
    # The SHA-256 of each image its message shows (`ImageBlobs.load_images` has them).
    images: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One stored event, or several coalesced text deltas (`first_seq`..`seq`).

    `payload` is the event as JSON text (see `seam.core.event_log`); coalesced deltas
    also keep each piece's length, so a replay from any sequence number inside the range
    is exact.
    """

    session_key: str
    seq: int
    first_seq: int
    type: str
    payload: str
    submission_id: str | None = None


@dataclass(frozen=True, slots=True)
class Settlement:
    """How a submission ends: what `settle` records, apart from who holds the lease."""

    outcome: Outcome
    result: str | None = None
    error: str | None = None
    finish_reason: str | None = None
    # When an abort was requested meanwhile, settle it aborted instead (finish reason
    # "aborted", no result or error), in the same transaction, so the caller need not
    # read the submission first to find out.
    unless_aborted: bool = False
    # The turn's last step, written in the same transaction before the submission is
    # settled (as `append_for` would write it, under the same lease check): its answer
    # and last events cost no write of their own, and the answer is durable no later
    # than the acknowledgement.
    journal: JournalEntry | None = None

    def for_submission(self, sub: Submission) -> Settlement:
        """What is recorded for `sub`: this, or the abort it asked to honour."""
        if self.unless_aborted and sub.abort_requested:
            return ABORTED
        return self


ABORTED = Settlement("aborted", finish_reason="aborted")


@dataclass(frozen=True, slots=True)
class ClaimScope:
    """Which submissions a claim may take, beyond the queue's own rules: only
    `submission_id` when given, and running ones leased to a `dead_owners` entry count
    as free (their owner is known gone, whatever the lease says)."""

    submission_id: str | None = None
    dead_owners: Sequence[str] = ()


ANY_RUNNABLE = ClaimScope()


@dataclass(frozen=True, slots=True)
class SubmissionQuery:
    """Which submissions `submissions` lists: in these states only (None: any), at most
    `limit` of them (None: all)."""

    states: Sequence[SubmissionState] | None = None
    limit: int | None = None


EVERY_SUBMISSION = SubmissionQuery()
UNSETTLED = SubmissionQuery(states=("queued", "running"))
RUNNING = SubmissionQuery(states=("running",))


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """What one step of a running turn writes in one transaction: its transcript
    messages, the model calls they came from (as `record_usage` would record them) and
    event records of the session (as `append_events` would store them)."""

    messages: Sequence[Message]
    usage: Sequence[UsageRecord] = ()
    events: Sequence[EventRecord] = ()


@dataclass(frozen=True, slots=True)
class EventQuery:
    """Which stored events `events` returns: those with `seq > after_seq`, only one
    submission's when `submission_id` is given, at most `limit` (None: all)."""

    after_seq: int = 0
    limit: int | None = None
    submission_id: str | None = None


ALL_EVENTS = EventQuery()


# Rules every backend applies the same way.


def check_new(submission: NewSubmission) -> None:
    if not submission.id:
        raise ValueError("a submission needs a non-empty id")
    if submission.max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {submission.max_attempts}")
    if len(submission.images) > MAX_IMAGES:
        raise ValueError(f"a submission shows at most {MAX_IMAGES} images")


def check_same_payload(existing: Submission, new: NewSubmission) -> None:
    """Admission is idempotent by id: a resend is fine, a different payload is not."""
    # A resend that shows no images is the stored submission driven again by its id
    # (`Runtime.ask_key`): its images are the stored ones. Other images are a conflict.
    images = tuple(image.sha256 for image in new.images) or existing.images
    if (existing.session_key, existing.input, existing.personality, existing.images) != (
        new.session_key,
        new.input,
        new.personality,
        images,
    ):
        raise SubmissionConflict(
            f"submission id {new.id!r} is already used by another submission "
            f"(session {existing.session_key!r}) with a different payload"
        )


def give_up_message(sub: Submission) -> str:
    last = f"; last error: {sub.error}" if sub.error else ""
    return f"gave up after {sub.attempts} attempts{last}"


def lease_lost_message(sub: Submission, owner: str) -> str:
    if sub.state == "running":
        return f"submission {sub.id!r} is leased to {sub.lease_owner!r}, not {owner!r}"
    return f"submission {sub.id!r} is {sub.state}; {owner!r} holds no lease on it"


def check_holder(sub: Submission | None, submission_id: str, owner: str | None) -> Submission:
    """The submission when `owner` may write to it: it holds the lease, or (`owner`
    None, for a settle) the submission is still queued. Raises otherwise."""
    if sub is None:
        raise SubmissionNotFound(f"no submission {submission_id!r}")
    if owner is None:
        if sub.state != "queued":
            raise LeaseLost(f"submission {submission_id!r} is {sub.state}, not queued")
    elif sub.state != "running" or sub.lease_owner != owner:
        raise LeaseLost(lease_lost_message(sub, owner))
    return sub


@runtime_checkable
class SubmissionQueue(Protocol):
    """Turns asked for and watched: queue a user message, see how it is going, stop it.

    For the surfaces that start turns (`Session.submit`, the web API, the gateway, cron)
    and show or abort them (`seam sessions`, `/stop`, the unsettled-turns check)."""

    async def admit(self, submission: NewSubmission) -> Submission:
        """Queue a submission. The same id with the same payload returns the stored one
        unchanged; the same id with another payload raises SubmissionConflict. Raises
        SessionNotFound when the session does not exist."""
        ...

    async def submission(self, submission_id: str) -> Submission | None: ...

    async def submissions(
        self, session_key: str | None = None, query: SubmissionQuery = EVERY_SUBMISSION
    ) -> list[Submission]:
        """Oldest first; only the session's when `session_key` is given."""
        ...

    async def request_abort(self, submission_id: str) -> Submission:
        """A queued submission settles `aborted` at once; a running one is flagged and its
        owner settles it. Settled submissions are returned unchanged."""
        ...


@runtime_checkable
class SubmissionLeases(Protocol):
    """Running queued turns: lease one, keep the lease, settle it or hand it back.

    For the `Coordinator` (and so every worker, `seam serve` and the gateway): one owner
    at a time runs a submission, and a dead owner's lease runs out for another."""

    async def claim(
        self, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS, scope: ClaimScope = ANY_RUNNABLE
    ) -> Submission | None:
        """Lease the oldest runnable submission (or only `scope.submission_id`) to `owner`.

        Runnable: queued and due (`not_before` passed) in a session with no running
        submission, or running under an expired lease or one held by a `scope.dead_owners`
        entry. At most one submission per session runs at a time, so messages never
        interleave. Each claim counts an attempt; a submission that has used all its
        attempts is settled `failed` instead of being handed out.
        """
        ...

    async def admit_and_claim(
        self, submission: NewSubmission, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS
    ) -> Submission:
        """`admit`, and in the same transaction `claim` the submission for `owner` when it
        may run at once: it is new and its session has no submission queued or running
        (so nothing it would overtake). It comes back running, one attempt counted.
        Otherwise it comes back as `admit` returns it (queued behind its session's work,
        or as stored when the id was admitted before) for the caller to claim as usual.

        For the process that runs what it submits (`Session.ask`): one transaction where
        an admission and a claim made two."""
        ...

    async def renew(self, submission_id: str, owner: str, *, lease: float) -> None:
        """Extend the lease. Raises LeaseLost when `owner` no longer holds it."""
        ...

    async def settle(
        self, submission_id: str, owner: str | None, settlement: Settlement
    ) -> Submission:
        """Settle exactly once. `owner` must hold the lease (None: only for a queued
        submission, e.g. an abort before it ran). Raises LeaseLost otherwise.

        `settlement.unless_aborted`: see `Settlement.for_submission`;
        `settlement.journal`: written first, in the same transaction (needs an `owner`)."""
        ...

    async def release(
        self, submission_id: str, owner: str, *, not_before: float, error: str | None = None
    ) -> Submission:
        """Give a running submission back to the queue (a retry after `not_before`)."""
        ...

    async def wait_for_work(self, seconds: float) -> None:
        """Return when a submission may have become runnable, or after `seconds`."""
        ...


@runtime_checkable
class TurnJournal(Protocol):
    """A running turn's progress, written with its lease held, read back on resume.

    For the turn the `Coordinator` drives (each step's messages, usage and events in one
    transaction) and its repair after a crash (what the crashed attempt wrote)."""

    async def append_for(self, submission_id: str, owner: str, entry: JournalEntry) -> None:
        """Append the entry's messages to the submission's session, tagged with its id,
        and advance its `steps`, in one transaction. Raises LeaseLost when `owner` does
        not hold it. The entry's usage and events go in the same transaction, so a turn
        pays one write, not three."""
        ...

    async def submission_messages(self, submission_id: str) -> list[Message]:
        """The transcript messages this submission wrote, in order."""
        ...


@runtime_checkable
class EventLog(Protocol):
    """A session's stored events, so a stream can be resumed from any sequence number.

    For the event log (`seam.core.event_log`: replay), the web API's SSE streams (a
    reconnect with `Last-Event-ID`) and the Coordinator (numbering new events)."""

    async def append_events(self, records: Sequence[EventRecord]) -> None: ...

    async def events(self, session_key: str, query: EventQuery = ALL_EVENTS) -> list[EventRecord]:
        """The stored events `query` picks, in order (a coalesced record is returned
        whole when its range reaches past `after_seq`)."""
        ...

    async def last_seq(self, session_key: str) -> int:
        """The highest stored event sequence number of the session (0 when none)."""
        ...

    async def session_events(
        self, session_key: str, after_seq: int = 0
    ) -> list[EventRecord] | None:
        """The session's stored events after `after_seq`, as `events` gives them, or None
        when there is no such session: one read where an event stream's opening made two
        (the session's row, then its log), on a server that opens many at once."""
        ...


@runtime_checkable
class ExecutionStore(
    SessionStore, SubmissionQueue, SubmissionLeases, TurnJournal, EventLog, ImageBlobs, Protocol
):
    """The durable store wiring hands out: the conversation store plus every protocol
    above, so any worker can finish what another began. Code that needs only part of it
    can ask for that part."""
