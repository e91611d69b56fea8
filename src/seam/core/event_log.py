"""The event log: a turn's events stored as they stream, and replayed to a surface that
reconnects (a web client's `Last-Event-ID`, a CLI re-attaching to a worker).

Text deltas are the bulk of a turn's events, so `EventRecorder` coalesces consecutive
deltas of one turn into one record that keeps each piece's length: a replay from any
sequence number, even one inside a coalesced range, yields exactly the events after it.
Buffered deltas are flushed at the next other event, or by a timer shortly after the
first one was buffered, so a crash mid-stream loses at most that much streamed text.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

from seam.contracts import events as ev
from seam.contracts.events import AgentEvent, TextDelta
from seam.contracts.execution import EventQuery, EventRecord, ExecutionStore
from seam.contracts.messages import Usage
from seam.core.timer_lane import LaneTimer, timer_lane

log = logging.getLogger("seam.events")

FLUSH_AFTER_SECONDS = 0.2
# Seconds between attempts to store a batch the store refused (a disk full for a moment,
# a database restarting): a short outage must not cost a turn its `done` event, which a
# reconnecting surface waits for. After the last one the batch is dropped (and logged).
RETRY_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0)

EVENT_TYPES: dict[str, type[Any]] = {
    cls.type: cls
    for cls in (
        ev.RunStart,
        ev.TextDelta,
        ev.ThinkingDelta,
        ev.ToolStart,
        ev.ToolProgress,
        ev.ToolEnd,
        ev.ToolApprovalRequired,
        ev.ToolApprovalResponse,
        ev.UsageEvent,
        ev.ContextCompacted,
        ev.ContextWarning,
        ev.Halt,
        ev.Notice,
        ev.ErrorEvent,
        ev.Done,
    )
}


def _compact_json() -> Callable[[Any], str]:
    """Compact JSON text of a payload. `JSONEncoder.encode` builds its C encoder on every
    call; this builds it once (a third of the cost of encoding an event). Payloads are
    plain dicts, lists, strings and numbers made here, so the circular-reference check it
    leaves out has nothing to find."""
    plain = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # a Python without the C accelerator
        return plain.encode
    encoder = make(
        None, plain.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )

    def encode(payload: Any) -> str:
        return "".join(encoder(payload, 0))

    return encode


# A pure function of its text (the same text always comes back the same), which is what
# lets `encode` remember the redaction of names that repeat.
Redact = Callable[[str], str]


class Remembered:
    """A `Redact` that remembers its last few texts. A turn's answer is redacted where it
    is stored, again for its `done` event, and again where that event is logged; a tool's
    output where it is made, then in the transcript and the log: with this, each text is
    scanned once (a text that comes back unchanged is found again by identity)."""

    __slots__ = ("_recent", "redact")

    SIZE = 16

    def __init__(self, redact: Redact) -> None:
        self.redact = redact
        self._recent: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        recent = self._recent
        cleaned = recent.get(text)
        if cleaned is None:
            cleaned = self.redact(text)
            if len(recent) >= self.SIZE:
                del recent[next(iter(recent))]
            recent[text] = cleaned
        return cleaned


# Fields that name things rather than carry text: the record stores the session key in
# the clear anyway, the turn id is made here, the type is a constant, and a tool call's
# id is the provider's (the transcript keeps it unredacted too).
_IDENTIFIERS = frozenset({"type", "session_key", "turn_id", "call_id"})
# Short fields whose values repeat turn after turn (tool, model and provider names,
# finish reasons): their redactions are remembered, up to `_MEMO_SIZE` of them.
_REPEATING = frozenset(
    {"provider", "model", "personality", "name", "finish_reason", "kind", "decision", "reason"}
)
_MEMO_SIZE = 4096
_memo: dict[tuple[Redact, str], str] = {}
# Each event class's fields in order, looked up once (`dataclasses.fields` is slow).
_FIELDS: dict[type[Any], tuple[str, ...]] = {}
_json = _compact_json()


def encode(
    event: AgentEvent, submission_id: str | None = None, redact: Redact | None = None
) -> EventRecord:
    """The event as a record; its payload is `event_to_dict(event)` as compact JSON, with
    every text field passed through `redact`."""
    cls = type(event)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in fields(cls))
    data: dict[str, Any] = {"type": event.type}
    for name in names:
        value = getattr(event, name)
        if type(value) is str:
            if redact is not None and value and name not in _IDENTIFIERS:
                value = _redact_field(redact, name, value)
        elif isinstance(value, Usage):
            value = _usage_dict(value)
        data[name] = value
    return EventRecord(
        event.session_key, event.seq, event.seq, event.type, _json(data), submission_id
    )


def _redact_field(redact: Redact, name: str, value: str) -> str:
    if name not in _REPEATING:
        return redact(value)
    key = (redact, value)
    cleaned = _memo.get(key)
    if cleaned is None:
        if len(_memo) >= _MEMO_SIZE:
            _memo.clear()
        cleaned = _memo[key] = redact(value)
    return cleaned


def _usage_dict(usage: Usage) -> dict[str, Any]:
    names = _FIELDS.get(Usage)
    if names is None:
        names = _FIELDS[Usage] = tuple(f.name for f in fields(Usage))
    return {name: getattr(usage, name) for name in names}


def encode_deltas(
    deltas: Sequence[TextDelta], submission_id: str | None, redact: Redact | None = None
) -> EventRecord:
    """One record for consecutive deltas. When redaction changes their text (a secret
    streamed in pieces), the record's text arrives whole with its last delta: the other
    sequence numbers replay as empty deltas, so replay never has gaps or shows a secret."""
    texts = [d.text for d in deltas]
    return _deltas_record(deltas[0], deltas[-1].seq, texts, submission_id, redact)


def _deltas_record(
    first: TextDelta,
    last_seq: int,
    texts: list[str],
    submission_id: str | None,
    redact: Redact | None,
) -> EventRecord:
    """The record of `texts`, the pieces of consecutive deltas from `first` to the one
    numbered `last_seq`."""
    text = "".join(texts)
    pieces = list(map(len, texts))
    if redact is not None:
        cleaned = redact(text)
        if cleaned != text:
            text = cleaned
            pieces = [0] * (len(texts) - 1) + [len(text)]
    payload = {
        "type": "text_delta",
        "session_key": first.session_key,
        "turn_id": first.turn_id,
        "seq": last_seq,
        "text": text,
        "pieces": pieces,
    }
    return EventRecord(
        first.session_key, last_seq, first.seq, "text_delta", _json(payload), submission_id
    )


def decode(record: EventRecord, after_seq: int = 0) -> list[AgentEvent]:
    """The events a record holds with `seq > after_seq`; unknown types are skipped (a newer
    Seam may have stored them), as every consumer must ignore types it does not know."""
    data = json.loads(record.payload)
    cls = EVENT_TYPES.get(record.type)
    if cls is None:
        return []
    if record.type == "text_delta" and "pieces" in data:
        out: list[AgentEvent] = []
        text: str = data["text"]
        at = 0
        for seq, size in enumerate(data["pieces"], start=record.first_seq):
            piece = text[at : at + size]
            at += size
            if seq > after_seq:
                out.append(TextDelta(data["session_key"], data["turn_id"], seq, piece))
        return out
    if record.seq <= after_seq:
        return []
    kwargs = {f.name: data[f.name] for f in fields(cls) if f.name in data}
    if "usage" in kwargs:
        kwargs["usage"] = Usage(**kwargs["usage"])
    event: AgentEvent = cls(**kwargs)
    return [event]


async def replay(store: ExecutionStore, session_key: str, after_seq: int = 0) -> list[AgentEvent]:
    """Every stored event of the session after `after_seq`, in order."""
    return decoded(await store.events(session_key, EventQuery(after_seq=after_seq)), after_seq)


def decoded(records: Sequence[EventRecord], after_seq: int = 0) -> list[AgentEvent]:
    """The events of `records` (read after `after_seq`), in order."""
    out: list[AgentEvent] = []
    for record in records:
        out.extend(decode(record, after_seq))
    return out


class EventRecorder:
    """Stores a turn's events as they pass through (see the module docstring).

    The turn never waits for the store, and most events cost no write of their own:
    records wait (at most `FLUSH_AFTER_SECONDS`) for the turn's next transcript write to
    take them (`handover`); what no write takes in time goes to one writer task per
    recorder, which stores records in order, as many at a time as have piled up. `flush`
    and `aclose` wait for everything recorded so far. A batch the store refuses is tried
    again after each of `retry_delays` (later records wait behind it, keeping the order);
    past the last one it goes back to the front of the queue, for the next handover or
    flush to take, so the log never lags the transcript. Failing for good (at `aclose`)
    is logged, never raised: the turn is what matters, and the transcript stays the source
    of truth for recovery.
    """

    def __init__(
        self,
        store: ExecutionStore,
        submission_id: str | None = None,
        *,
        redact: Redact | None = None,
        retry_delays: Sequence[float] = RETRY_DELAYS,
    ) -> None:
        self._store = store
        self._retry_delays = tuple(retry_delays)
        self._submission_id = submission_id
        # What the loop applies to what it stores: the log must not keep what the
        # transcript redacts (a secret the model echoed, a token in tool arguments).
        self._redact = redact
        # The text deltas not encoded yet: the first, and each one's text. The deltas
        # themselves are not kept (a turn streams hundreds, each freed once handed on).
        self._first: TextDelta | None = None
        self._texts: list[str] = []
        self._last_seq = 0
        self._timer: LaneTimer | None = None
        # Encoded records not stored yet, oldest first.
        self._pending: list[EventRecord] = []
        self._writer: asyncio.Task[None] | None = None
        # Whether records were given up on (the store refused them past every retry).
        self.lost = False
        # The writer task is in a store call (its records cannot be handed over).
        self._writing = False

    def buffer(self, event: AgentEvent) -> bool:
        """Buffer a text delta of the current turn without awaiting (the hot path);
        False when the event needs `record`."""
        if type(event) is not TextDelta:
            return False
        first = self._first
        if first is None:
            self._first = event
            if self._timer is None:
                self._arm()
        elif first.turn_id != event.turn_id:
            return False
        self._texts.append(event.text)
        self._last_seq = event.seq
        return True

    async def record(self, event: AgentEvent) -> None:
        """Queue `event` for storing, after the deltas buffered before it."""
        if self.buffer(event):
            return
        self._take()
        if isinstance(event, TextDelta):  # a delta of a new turn: start a new batch
            self.buffer(event)
            return
        self._pending.append(encode(event, self._submission_id, self._redact))
        if self._timer is None:
            self._arm()

    async def flush(self) -> None:
        """Store every event recorded so far; returns once they are (or failed to be)."""
        self._disarm()
        self._take()
        self._start()
        writer = self._writer
        if writer is not None:
            await asyncio.shield(writer)

    async def handover(self) -> list[EventRecord]:
        """Every record not stored yet, for the caller to store in its own write (the
        transcript's), so the log still never lags the transcript but costs no write of
        its own. A write already under way is waited for first (records commit in order);
        what it gave up on is handed over with the rest."""
        # The timer stays armed (cancelling and arming one per step costs more than the
        # one wake-up it saves): when it fires with nothing pending, it does nothing.
        self._take()
        if self._writing:
            writer = self._writer
            if writer is not None:
                await asyncio.shield(writer)
            self._take()
        # A writer task due to start finds nothing pending and ends.
        records, self._pending = self._pending, []
        return records

    async def aclose(self) -> None:
        await self.flush()
        if self._pending:  # given up on for good
            log.error("could not store %d events", len(self._pending))
            self.lost = True
            self._pending = []

    def _arm(self) -> None:
        # The loop's lane for this delay: one asyncio timer for every log's flush.
        self._timer = timer_lane(FLUSH_AFTER_SECONDS).call_later(self._flush_soon)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _take(self) -> None:
        """Move the buffered deltas, as one record, behind the pending records."""
        first = self._first
        if first is not None:
            texts, self._first, self._texts = self._texts, None, []
            self._pending.append(
                _deltas_record(first, self._last_seq, texts, self._submission_id, self._redact)
            )

    def _flush_soon(self) -> None:
        self._timer = None
        self._take()
        self._start()

    def _start(self) -> None:
        if self._pending and self._writer is None:
            self._writer = asyncio.ensure_future(self._write_pending())

    async def _write_pending(self) -> None:
        """The writer task: one store call at a time, so records are committed in order
        (a follower reading between two commits must never see a later record first)."""
        try:
            while self._pending:
                records, self._pending = self._pending, []
                self._writing = True
                try:
                    stored = await self._append(records)
                finally:
                    self._writing = False
                if not stored:  # back to the front, for a handover or the next flush
                    self._pending[:0] = records
                    return
        finally:
            self._writer = None

    async def _append(self, records: list[EventRecord]) -> bool:
        for delay in (*self._retry_delays, None):
            try:
                await self._store.append_events(records)
                return True
            except Exception:
                if delay is None:
                    log.warning("could not store %d events", len(records), exc_info=True)
                    return False
                log.debug("could not store %d events; trying again", len(records))
                await asyncio.sleep(delay)
        return False  # pragma: no cover (the loop returns)
